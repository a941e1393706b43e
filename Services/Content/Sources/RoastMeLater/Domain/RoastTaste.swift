import Foundation
import LanternLLM

/// What a user's reactions taught (REQ-RCT): repeated 👎 in a category tone that category down for them and ask for
/// another angle; their 🔥 roasts become examples of what works. Only Lantern's own earlier texts are quoted, never
/// anything the user wrote, and only in this user's prompts.
struct RoastTaste: Sendable, Equatable {
    /// 👎 among the user's latest roasts of the category (`RoastTaste.window`).
    var recentDislikes: Int
    /// Texts of the user's latest 🔥 roasts, the category's first.
    var favourites: [String]

    static let none = RoastTaste(recentDislikes: 0, favourites: [])
    /// How many of the latest roasts of a category are looked at.
    static let window = 10
    /// From how many 👎 among them the category is toned down.
    static let dislikesToTone = 2
    static let maxExamples = 3
    static let maxExampleCharacters = 160

    var tonedDown: Bool { recentDislikes >= Self.dislikesToTone }

    /// The heat the local grammar writes in: one band gentler when toned down.
    func heat(for spice: RoastCatalogue.Spice) -> String {
        guard tonedDown else { return spice.heat }
        return ["hot": "medium", "medium": "mild"][spice.heat] ?? "mild"
    }

    /// What the prompt learns from it.
    var descriptors: [Descriptor] {
        var descriptors: [Descriptor] = []
        if tonedDown {
            descriptors.append(Descriptor("feedback", "Feedback on this category",
                                          "The reader disliked \(recentDislikes) of their latest roasts here: be gentler than the spice level says and take a different angle than usual."))
        }
        for text in favourites.prefix(Self.maxExamples) {
            descriptors.append(Descriptor("loved", "A roast this reader loved (match its spirit, do not repeat it)", String(text.prefix(Self.maxExampleCharacters))))
        }
        return descriptors
    }
}
