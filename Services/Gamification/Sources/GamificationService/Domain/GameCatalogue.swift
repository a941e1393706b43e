import Foundation
import LanternContracts
import LanternCore

/// One app's badges and rewards, as data (`Catalogue/<app>.json`): the engine knows streaks, counts and sets of
/// event fields, nothing about roasts, so another app joins by adding its file (Services/Gamification/README.md).
public struct GameCatalogue: Sendable, Decodable {
    public var app: AppID
    /// The languages every text exists in; the first is the default.
    public var languages: [String]
    public var badges: [Badge]
    public var rewards: [Reward]
    /// Push catalogue keys (push-worker's `Catalogue/`): the streak reminder and a badge earned.
    public var pushes: Pushes

    public struct Pushes: Sendable, Decodable {
        public var streakReminder: String
        public var badgeEarned: String
        public var rewardUnlocked: String
    }

    /// A text in every language of the catalogue.
    public typealias Texts = [String: String]

    public struct Badge: Sendable, Decodable, Identifiable {
        public var id: String
        /// REQ-BDG-001: streak, generation, favorites, sharing, exploration (and collection).
        public var category: String
        /// An SF Symbols name the app draws.
        public var icon: String
        public var name: Texts
        public var description: Texts
        public var rule: Rule
    }

    public struct Reward: Sendable, Decodable, Identifiable {
        public var id: String
        public var name: Texts
        public var description: Texts
        public var rule: Rule
        /// A title the profile shows once unlocked (REQ-STR-009's "Roast Master").
        public var title: Texts?
        /// The special flame icon (REQ-STR-009).
        public var flame: Bool?
    }

    /// When a badge or a reward is earned: exactly one of the fields.
    public struct Rule: Sendable, Decodable, Equatable {
        /// A streak of this many days (the longest one reached: a streak restored by the freeze counts).
        public var streak: Int?
        /// This many events of a type (optionally only those whose fields equal `where`).
        public var count: Count?
        /// This many distinct values of an event field (categories tried, roasts favourited).
        public var distinct: Distinct?
        /// Every member of a group: distinct `member` values per `group` value reaching the event's `size` field
        /// (every scenario of a collection, REQ-COL-008). One badge per group value, its `subject`.
        public var complete: Complete?

        public struct Count: Sendable, Decodable, Equatable {
            public var event: String
            public var `where`: [String: JSONValue]?
            public var target: Int
        }

        public struct Distinct: Sendable, Decodable, Equatable {
            public var event: String
            public var field: String
            public var `where`: [String: JSONValue]?
            public var target: Int
        }

        public struct Complete: Sendable, Decodable, Equatable {
            public var event: String
            public var group: String
            public var member: String
            public var size: String
        }

        /// The counter the rule reads (rules reading the same one share it: 10, 50 and 100 roasts).
        var metric: Metric? {
            if let count { return Metric(event: count.event, field: nil, filter: count.where, grouped: nil, sizeField: nil) }
            if let distinct { return Metric(event: distinct.event, field: distinct.field, filter: distinct.where, grouped: nil, sizeField: nil) }
            if let complete { return Metric(event: complete.event, field: complete.member, filter: nil, grouped: complete.group, sizeField: complete.size) }
            return nil
        }

        var target: Int? { streak ?? count?.target ?? distinct?.target }
    }

    public init(app: AppID, languages: [String], badges: [Badge], rewards: [Reward], pushes: Pushes) throws {
        self.app = app
        self.languages = languages
        self.badges = badges
        self.rewards = rewards
        self.pushes = pushes
        try validate()
    }

    /// A catalogue that would misbehave is refused at start-up, naming what is wrong.
    public func validate() throws {
        func fail(_ message: String) -> CatalogueError { CatalogueError(app: app.rawValue, message: message) }
        guard !languages.isEmpty else { throw fail("lists no languages") }
        var ids = Set<String>()
        for (id, name, description, rule) in badges.map({ ($0.id, $0.name, $0.description, $0.rule) }) + rewards.map({ ($0.id, $0.name, $0.description, $0.rule) }) {
            guard ids.insert(id).inserted else { throw fail("'\(id)' is defined twice") }
            guard !id.isEmpty, id.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") }) else { throw fail("'\(id)' is not a snake_case id") }
            for language in languages where (name[language] ?? "").isEmpty || (description[language] ?? "").isEmpty {
                throw fail("'\(id)' has no name or description in \(language)")
            }
            let kinds = [rule.streak != nil, rule.count != nil, rule.distinct != nil, rule.complete != nil].filter { $0 }.count
            guard kinds == 1 else { throw fail("'\(id)' must have exactly one rule (streak, count, distinct or complete)") }
            if let target = rule.target, target < 1 { throw fail("'\(id)' has a target below 1") }
        }
        // The pushes must be messages of push-worker's catalogue for this app, with the arguments gamification gives.
        for (key, argument) in [(pushes.streakReminder, "streak"), (pushes.badgeEarned, "badge"), (pushes.rewardUnlocked, "reward")] {
            guard PushMessage.all.contains(where: { $0.key == key && $0.app == app && $0.arguments == [argument] }) else {
                throw fail("push '\(key)' is not a message of \(app.rawValue) with the argument {\(argument)} (PushMessage.all)")
            }
        }
        for reward in rewards where reward.rule.streak == nil {
            throw fail("reward '\(reward.id)' must be a streak rule (rewards are what a streak unlocks)")
        }
    }

    /// The event types some rule counts: the consumer subscribes to these and skips the rest without a write.
    public var countedEvents: Set<String> { Set(badges.compactMap { $0.rule.metric?.event }) }

    /// The catalogues bundled with the service, by app.
    public static func bundled() throws -> [AppID: GameCatalogue] {
        guard let folder = Bundle.module.url(forResource: "Catalogue", withExtension: nil) else { throw CocoaError(.fileNoSuchFile) }
        var catalogues: [AppID: GameCatalogue] = [:]
        for file in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil) where file.pathExtension == "json" {
            let catalogue = try JSONDecoder().decode(GameCatalogue.self, from: Data(contentsOf: file))
            try catalogue.validate()
            catalogues[catalogue.app] = catalogue
        }
        return catalogues
    }

    /// `texts` in `language`, else the catalogue's first language.
    public func text(_ texts: Texts, in language: String) -> String {
        texts[language] ?? languages.first.flatMap { texts[$0] } ?? ""
    }
}

public struct CatalogueError: Error, CustomStringConvertible {
    public var app: String
    public var message: String
    public var description: String { "gamification catalogue \(app): \(message)" }
}

/// A counter kept per user: events of a type (matching a filter), or distinct values of one of their fields,
/// optionally per value of a grouping field. Its `key` names it in the `counters` table.
public struct Metric: Sendable {
    public var event: String
    public var field: String?
    public var filter: [String: JSONValue]?
    public var grouped: String?
    /// For grouped metrics: the event field that says how many members complete a group.
    public var sizeField: String?

    public var key: String {
        var key = grouped != nil ? "complete:" : field == nil ? "count:" : "distinct:"
        key += event
        if let grouped { key += ":" + grouped }
        if let field { key += ":" + field }
        if let filter, !filter.isEmpty {
            key += "?" + filter.keys.sorted().map { "\($0)=\(Self.scalar(filter[$0]) ?? "null")" }.joined(separator: "&")
        }
        return key
    }

    /// A field's value as text (strings, integers, booleans); nil for anything else (objects, lists, null).
    static func scalar(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text): text
        case .number(let n) where n.rounded() == n && abs(n) < 1e15: String(Int64(n))
        case .bool(let b): b ? "true" : "false"
        default: nil
        }
    }
}
