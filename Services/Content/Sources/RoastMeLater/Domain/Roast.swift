import Foundation

/// A roast written for a user, as their history keeps it.
struct Roast: Sendable, Equatable {
    var id: UUID
    var userID: UUID
    var category: String
    var spice: Int
    var mood: String?
    var language: RoastLanguage
    var text: String
    /// No model wrote it: the local grammar did.
    var artisanal: Bool
    /// `gemini:…`, `openai:…` or `local`.
    var source: String
    /// The day in the user's time zone it was written on (YYYY-MM-DD).
    var localDate: String
    var reaction: RoastReaction?
    var reactedAt: Date?
    var favourite: Bool
    var createdAt: Date
    /// The collection and scenario it was asked in, if any.
    var collection: String? = nil
    var scenario: String? = nil
    /// How often the user shared it.
    var shares: Int = 0
    /// How many scenarios that collection had then (announced, so gamification can tell a completion).
    var collectionSize: Int? = nil
}

/// Which of a user's roasts a history page holds; nil matches any.
struct RoastFilter: Sendable, Equatable {
    var mood: String?
    var category: String?
    var reaction: RoastReaction?
    var favourite: Bool?
    var collection: String? = nil
    /// Only roasts older than this one (the previous page's last).
    var before: UUID?
    var limit: Int
}

/// A page of the history, newest first, and where the next one starts.
struct RoastPage: Sendable, Equatable {
    var roasts: [Roast]
    var next: UUID?
}

/// "Your Roast Stats" (REQ-RCT): the user's own counts, for their eyes only.
struct RoastStats: Sendable, Equatable {
    var total: Int
    var favourites: Int
    /// By reaction name; roasts without one are not counted here.
    var reactions: [String: Int]
    /// By mood id, `none` for roasts asked without one.
    var moods: [String: Int]
    var categories: [String: Int]
}
