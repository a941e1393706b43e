import ContentKit
import Foundation
import LanternCore

/// A collection (REQ-COL): a theme with a fixed list of scenarios to roast, shown while its schedule says so. The
/// seeds ship in `Catalogue/collections.json`; operators create, edit and retire them at run time (the operator
/// API), so the app never needs an update for a new one.
struct RoastCollection: Sendable, Codable, Equatable {
    /// One situation of the collection: a roast asked "in" the collection roasts one scenario.
    struct Scenario: Sendable, Codable, Equatable {
        /// Unique in the collection: `standup`, `banh-chung`, …
        var id: String
        var names: RoastNames
        /// The category whose words (and local grammar) the roast uses.
        var category: String
        /// The situation, for a model.
        var prompt: String
    }

    /// When the collection shows.
    enum Schedule: Sendable, Codable, Equatable {
        /// Always (Classic Office, Tech Life, Meeting Madness: REQ-COL-006).
        case permanent
        /// During these months of the user's calendar (rotating collections, REQ-COL-007).
        case monthly(months: [Int])
        /// Around a festival of the Vietnamese lunar calendar (REQ-COL-004): `festival` is astrology's key (`tet`,
        /// `trung_thu`, …), from `daysBefore` days before it to `daysAfter` days after.
        case seasonal(festival: String, daysBefore: Int, daysAfter: Int)

        private enum CodingKeys: String, CodingKey { case kind, months, festival, daysBefore, daysAfter }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            switch try c.decode(String.self, forKey: .kind) {
            case "permanent": self = .permanent
            case "monthly": self = .monthly(months: try c.decode([Int].self, forKey: .months))
            case "seasonal":
                self = .seasonal(festival: try c.decode(String.self, forKey: .festival), daysBefore: try c.decode(Int.self, forKey: .daysBefore),
                                 daysAfter: try c.decode(Int.self, forKey: .daysAfter))
            case let kind:
                throw DecodingError.dataCorruptedError(forKey: .kind, in: c, debugDescription: "'\(kind)' is not permanent, monthly or seasonal")
            }
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(kind, forKey: .kind)
            switch self {
            case .permanent: break
            case .monthly(let months): try c.encode(months, forKey: .months)
            case .seasonal(let festival, let before, let after):
                try c.encode(festival, forKey: .festival)
                try c.encode(before, forKey: .daysBefore)
                try c.encode(after, forKey: .daysAfter)
            }
        }

        var kind: String {
            switch self {
            case .permanent: "permanent"
            case .monthly: "monthly"
            case .seasonal: "seasonal"
            }
        }
    }

    var id: String
    var names: RoastNames
    var descriptions: RoastNames
    /// An SF Symbols name.
    var icon: String
    /// `#RRGGBB`.
    var themeColor: String
    /// How roasts of the collection change, for a model.
    var promptModifier: String
    var scenarios: [Scenario]
    /// A sample line the app shows before the user roasts anything (REQ-COL-003).
    var preview: RoastNames
    /// The home-screen banner while a seasonal collection runs (REQ-COL-005).
    var banner: RoastNames?
    var schedule: Schedule

    func scenario(_ id: String) -> Scenario? { scenarios.first { $0.id == id } }

    /// What is wrong with it, field by field (an operator's edit is refused with these).
    func problems(catalogue: RoastCatalogue, festivals: Set<String>) -> [(field: String, message: String)] {
        var found: [(String, String)] = []
        func check(_ ok: Bool, _ field: String, _ message: String) { if !ok { found.append((field, message)) } }
        // What players read follows the rule of every text a person shows to others (`VisibleText`): something must
        // show, no control or invisible formatting, no character stacked with marks.
        func visible(_ text: String, _ field: String, max: Int) {
            if case .failure(let refusal) = VisibleText.validate(text, .init(maxCharacters: max, maxBytes: max * 8)) {
                found.append((field, refusal.description))
            }
        }
        check(Self.isSlug(id), "id", "must be 2–40 characters of a–z, 0–9 and -")
        for (field, names) in [("names", names), ("descriptions", descriptions), ("preview", preview)] + (banner.map { [("banner", $0)] } ?? []) {
            let limit = field == "names" ? 40 : 200
            for language in RoastLanguage.allCases { visible(names[language], "\(field).\(language.rawValue)", max: limit) }
        }
        check(!icon.isEmpty && icon.count <= 60 && icon.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == ".") },
              "icon", "must be an SF Symbols name such as briefcase.fill")
        check(themeColor.count == 7 && themeColor.first == "#" && themeColor.dropFirst().allSatisfy(\.isHexDigit), "themeColor", "must be #RRGGBB")
        visible(promptModifier, "promptModifier", max: 300)
        check((1...50).contains(scenarios.count), "scenarios", "must list 1–50 scenarios")
        var seen: Set<String> = []
        for (index, scenario) in scenarios.enumerated() {
            let at = "scenarios[\(index)]"
            check(Self.isSlug(scenario.id) && seen.insert(scenario.id).inserted, "\(at).id", "must be a slug (a–z, 0–9, -) unique in the collection")
            for language in RoastLanguage.allCases { visible(scenario.names[language], "\(at).names.\(language.rawValue)", max: 60) }
            check(catalogue.category(scenario.category) != nil, "\(at).category",
                  "'\(scenario.category)' is not a category; one of: \(catalogue.categories.map(\.id).joined(separator: ", "))")
            visible(scenario.prompt, "\(at).prompt", max: 300)
        }
        switch schedule {
        case .permanent: break
        case .monthly(let months):
            check(!months.isEmpty && months.allSatisfy { (1...12).contains($0) } && Set(months).count == months.count,
                  "schedule.months", "must list distinct months 1–12")
        case .seasonal(let festival, let before, let after):
            check(festivals.contains(festival), "schedule.festival", "'\(festival)' is not a festival; one of: \(festivals.sorted().joined(separator: ", "))")
            check((0...60).contains(before), "schedule.daysBefore", "must be 0–60")
            check((0...60).contains(after), "schedule.daysAfter", "must be 0–60")
        }
        return found
    }

    static func isSlug(_ text: String) -> Bool {
        (2...40).contains(text.count) && text.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }
}

/// A collection as kept: its definition, whether it was retired, and who changed it last.
struct StoredCollection: Sendable, Equatable {
    var collection: RoastCollection
    var retired: Bool
    /// Starts at 1, one more per change.
    var version: Int
    var updatedAt: Date
    var updatedBy: String
}

/// One change an operator made, for the audit trail (who, when, what changed).
struct CollectionChange: Sendable, Equatable {
    /// `created`, `edited`, `retired` or `restored`.
    var action: String
    var collectionID: String
    var version: Int
    var operatorName: String
    var at: Date
    /// The top-level fields that changed, each before (null when created) and after.
    var fields: [String: FieldChange]

    struct FieldChange: Sendable, Equatable, Codable {
        var before: JSONValue?
        var after: JSONValue?
    }
}

/// When a collection shows: a window of local dates, both ends included.
struct CollectionWindow: Sendable, Equatable {
    var from: String
    var until: String
}

/// Which collections show on a day (REQ-COL-004, -007), given the festival dates of the Vietnamese calendar around it.
enum CollectionSchedules {
    /// The window of `schedule` that holds `date` (`YYYY-MM-DD`), nil when none does; nil `festivals` (astrology not
    /// answering) hides seasonal collections rather than guessing their dates.
    static func window(_ schedule: RoastCollection.Schedule, on date: String, festivals: [String: [String]]?) -> CollectionWindow? {
        guard let day = LocalDay(date) else { return nil }
        switch schedule {
        case .permanent:
            return CollectionWindow(from: "0001-01-01", until: "9999-12-31")
        case .monthly(let months):
            guard months.contains(day.month) else { return nil }
            return CollectionWindow(from: LocalDay(year: day.year, month: day.month, day: 1).description,
                                    until: LocalDay(year: day.year, month: day.month, day: day.daysInMonth).description)
        case .seasonal(let festival, let before, let after):
            for festivalDate in festivals?[festival] ?? [] {
                guard let at = LocalDay(festivalDate) else { continue }
                let from = at.adding(days: -before), until = at.adding(days: after)
                if from <= day && day <= until { return CollectionWindow(from: from.description, until: until.description) }
            }
            return nil
        }
    }
}
