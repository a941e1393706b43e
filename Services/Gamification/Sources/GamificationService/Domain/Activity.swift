import Foundation
import LanternContracts
import LanternCore

/// An event another service announced about a user's activity (`roast.generated`, `roast.shared`…), as the engine
/// sees it: a type, a user, an instant and its fields. The engine reads fields by name, as the catalogue says.
public struct ActivityEvent: Sendable, Equatable {
    public var id: UUID
    public var type: String
    public var user: UUID
    public var occurredAt: Date
    public var fields: JSONValue

    public init(id: UUID, type: String, user: UUID, occurredAt: Date, fields: JSONValue) {
        self.id = id
        self.type = type
        self.user = user
        self.occurredAt = occurredAt
        self.fields = fields
    }
}

/// One step of a counter: `+1` to a count, or a member to add to a set (the count grows only if it is new).
public struct CounterStep: Sendable, Hashable {
    public var user: UUID
    public var app: AppID
    public var metric: String
    /// The group's value for grouped metrics (a collection id), else "".
    public var subject: String
    /// Set: add this member to the set (a category, a roast id); nil: count the event.
    public var member: String?
    /// For grouped metrics: how many members complete the group (the event's size field).
    public var size: Int?
}

/// A counter's value before and after a batch of events.
public struct CounterChange: Sendable, Hashable {
    public var user: UUID
    public var app: AppID
    public var metric: String
    public var subject: String
    public var before: Int
    public var after: Int
    /// For grouped metrics: the group's size (the largest an event gave).
    public var size: Int?
}

/// A badge earned (`subject`: the group value of a `complete` badge, else "").
public struct EarnedBadge: Sendable, Hashable, Codable {
    public var badge: String
    public var subject: String
    public var earnedAt: Date
}

/// Badges and rewards as the rules say: per event in O(1) — counters and sets per user, compared with the rules'
/// targets as they cross them, never a scan of history.
public struct Achievements: Sendable {
    public let catalogues: [AppID: GameCatalogue]
    /// metric key → its metric and the app, for every rule of every catalogue.
    let metricsByEvent: [String: [(app: AppID, metric: Metric)]]

    public init(catalogues: [AppID: GameCatalogue]) {
        self.catalogues = catalogues
        var byEvent: [String: [(app: AppID, metric: Metric)]] = [:]
        for (app, catalogue) in catalogues.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            var seen = Set<String>()
            for badge in catalogue.badges {
                guard let metric = badge.rule.metric, seen.insert(metric.key).inserted else { continue }
                byEvent[metric.event, default: []].append((app, metric))
            }
        }
        metricsByEvent = byEvent
    }

    /// The event types some catalogue counts.
    public var countedEvents: Set<String> { Set(metricsByEvent.keys) }

    /// The counter steps of one event.
    public func steps(for event: ActivityEvent) -> [CounterStep] {
        var steps: [CounterStep] = []
        for (app, metric) in metricsByEvent[event.type] ?? [] {
            if let filter = metric.filter, !filter.allSatisfy({ Metric.scalar(event.fields[$0.key]) == Metric.scalar($0.value) }) { continue }
            var subject = ""
            var size: Int?
            if let group = metric.grouped {
                guard let value = Metric.scalar(event.fields[group]), !value.isEmpty, value.utf8.count <= 100,
                      let sizeField = metric.sizeField, case .number(let n)? = event.fields[sizeField], n >= 1, n <= 10_000 else { continue }
                subject = value
                size = Int(n)
            }
            if let field = metric.field {
                guard let member = Metric.scalar(event.fields[field]), !member.isEmpty, member.utf8.count <= 200 else { continue }
                steps.append(CounterStep(user: event.user, app: app, metric: metric.key, subject: subject, member: member, size: size))
            } else {
                steps.append(CounterStep(user: event.user, app: app, metric: metric.key, subject: subject, member: nil, size: size))
            }
        }
        return steps
    }

    /// The badges a batch of counter changes earns: each rule whose target lies in (before, after].
    public func earned(by changes: [CounterChange], at date: Date) -> [(user: UUID, app: AppID, badge: EarnedBadge)] {
        var earned: [(user: UUID, app: AppID, badge: EarnedBadge)] = []
        for change in changes where change.after > change.before {
            guard let catalogue = catalogues[change.app] else { continue }
            for badge in catalogue.badges where badge.rule.metric?.key == change.metric {
                let target: Int
                if badge.rule.complete != nil {
                    guard let size = change.size else { continue }
                    target = size
                } else {
                    guard let given = badge.rule.target else { continue }
                    target = given
                }
                if change.before < target && target <= change.after {
                    earned.append((change.user, change.app, EarnedBadge(badge: badge.id, subject: change.subject, earnedAt: date)))
                }
            }
        }
        return earned
    }

    /// Streak badges and rewards crossed when the longest streak went from `before` to `after`.
    public func streakMilestones(app: AppID, longestBefore before: Int, after: Int) -> (badges: [GameCatalogue.Badge], rewards: [GameCatalogue.Reward]) {
        guard let catalogue = catalogues[app], after > before else { return ([], []) }
        let crossed: (GameCatalogue.Rule) -> Bool = { rule in
            guard let target = rule.streak else { return false }
            return before < target && target <= after
        }
        return (catalogue.badges.filter { crossed($0.rule) }, catalogue.rewards.filter { crossed($0.rule) })
    }
}

/// Progress toward a badge, 0…1, from the user's counters and streak.
extension GameCatalogue.Badge {
    public func progress(counters: [String: Int], longestStreak: Int) -> Double {
        let value: Int
        let target: Int
        if let streak = rule.streak {
            (value, target) = (longestStreak, streak)
        } else if let metric = rule.metric, let given = rule.target {
            (value, target) = (counters[metric.key] ?? 0, given)
        } else {
            return 0
        }
        return min(1, Double(value) / Double(max(target, 1)))
    }
}
