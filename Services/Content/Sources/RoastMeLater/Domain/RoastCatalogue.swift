import Foundation
import LanternLLM

/// The languages RoastMeLater writes in (spec, Appendix C.6).
enum RoastLanguage: String, Sendable, Codable, CaseIterable {
    case en, vi

    var textLanguage: TextLanguage { self == .en ? .english : .vietnamese }
}

/// A text of the catalogue in each language the app speaks.
struct RoastNames: Sendable, Codable, Equatable {
    var en: String
    var vi: String

    subscript(_ language: RoastLanguage) -> String { language == .en ? en : vi }
}

/// RoastMeLater's catalogue (`Catalogue/catalogue.json`): the categories, the moods (REQ-MOD-002, each with its
/// prompt modifier) and the spice levels, named in English and Vietnamese for the app to show.
struct RoastCatalogue: Sendable, Decodable {
    struct Category: Sendable, Codable, Equatable {
        var id: String
        /// An SF Symbols name.
        var icon: String
        /// Unlocked by the `premium_roasts` reward (a 7-day streak, REQ-STR-008).
        var premium: Bool
        var names: RoastNames
        /// What the category is about, for a model.
        var prompt: String
        /// How its share cards look.
        var card: CardLook
    }

    /// A category on a share card: an emoji for its icon (SF Symbols exist only on Apple's devices) and the two
    /// colours of its background.
    struct CardLook: Sendable, Codable, Equatable {
        var emoji: String
        /// `#RRGGBB`, top and bottom of the gradient.
        var colors: [String]
    }

    /// A share card's design (REQ-SHR); premium ones unlock with the `premium_roasts` reward.
    struct CardTemplate: Sendable, Codable, Equatable {
        var id: String
        var names: RoastNames
        var premium: Bool
    }

    struct Mood: Sendable, Codable, Equatable {
        var id: String
        var icon: String
        var names: RoastNames
        /// How the roast changes for it (REQ-MOD-003–006), for a model.
        var modifier: String
    }

    struct Spice: Sendable, Codable, Equatable {
        /// 1–5.
        var level: Int
        /// `mild`, `medium` or `hot`: the band the local grammar writes in.
        var heat: String
        var names: RoastNames
        var modifier: String
    }

    var categories: [Category]
    var moods: [Mood]
    var spice: [Spice]
    var cardTemplates: [CardTemplate]

    /// The reward that unlocks the premium categories.
    static let premiumReward = "premium_roasts"

    func category(_ id: String) -> Category? { categories.first { $0.id == id } }
    func mood(_ id: String) -> Mood? { moods.first { $0.id == id } }
    func spice(_ level: Int) -> Spice? { spice.first { $0.level == level } }
    func cardTemplate(_ id: String) -> CardTemplate? { cardTemplates.first { $0.id == id } }
}

/// What a user asked for, checked against the catalogue.
struct RoastOrder: Sendable, Equatable {
    var category: RoastCatalogue.Category
    var spice: RoastCatalogue.Spice
    var mood: RoastCatalogue.Mood?
    var language: RoastLanguage
    /// The user's IANA time zone: the local day the roast counts for.
    var timeZone: TimeZone
    /// The collection and scenario it was asked in (REQ-COL-002), if any.
    var collection: RoastCollection? = nil
    var scenario: RoastCollection.Scenario? = nil
    /// The caller named the scenario (else the first not roasted yet was chosen, which a retry must not compare).
    var scenarioNamed = false
}

/// 😂 🔥 😐 👎 (REQ-RCT): one per roast, changeable and removable.
enum RoastReaction: String, Sendable, CaseIterable {
    case hilarious, fire, meh, dislike

    var emoji: String {
        switch self {
        case .hilarious: "😂"
        case .fire: "🔥"
        case .meh: "😐"
        case .dislike: "👎"
        }
    }

    /// By its name or its emoji (the spec's `RoastReaction` raw values).
    init?(given: String) {
        guard let reaction = Self(rawValue: given) ?? Self.allCases.first(where: { $0.emoji == given }) else { return nil }
        self = reaction
    }
}
