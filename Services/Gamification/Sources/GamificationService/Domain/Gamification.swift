import Foundation
import LanternContracts
import LanternCore

/// A user's streak row as stored: the state, its version (every write is conditional on it), where the user is
/// now and their reminder choice.
public struct StreakRow: Sendable, Equatable {
    public var state: StreakState
    public var version: Int64
    /// The zone of the latest check-in or reminder setting: the reminder's local midnight is this zone's.
    public var zone: String
    public var reminders: Bool
    public var remindAt: Date?
    /// The instant of the newest check-in by its time, counted or not (read from the check-ins kept, not written
    /// with the row): a check-in older than it does not move `zone`.
    public var latestCheckIn: Date?

    public init(state: StreakState, version: Int64, zone: String, reminders: Bool, remindAt: Date?, latestCheckIn: Date? = nil) {
        self.state = state
        self.version = version
        self.zone = zone
        self.reminders = reminders
        self.remindAt = remindAt
        self.latestCheckIn = latestCheckIn
    }
}

/// What a check-in answered, kept under its `Idempotency-Key`: a retry gets the same answer.
public struct CheckInResult: Sendable, Equatable, Codable {
    public var counted: Bool
    public var outcome: CheckInOutcome
    /// The local day the check-in was counted for (or would have been: its day in its zone).
    public var localDate: LocalDay
    public var late: Bool
    public var state: StreakState
    public var zone: String
    public var badges: [EarnedBadge]
    public var rewards: [String]
    /// When it was answered: a retry under the same key is answered as of then ("today", `countedToday`, `atRisk`),
    /// not re-rendered at the retry's time. Absent in answers kept before it was (those are rendered as of the retry).
    public var answeredAt: Date?
}

/// One conditional write of a streak: the new row if the stored version is still `expectedVersion` (nil: no row
/// yet), with what it earned and announces, all or nothing.
public struct StreakChange: Sendable {
    public var user: UUID
    public var app: AppID
    public var expectedVersion: Int64?
    /// Only the check-in is new (the same day again, from where the user already was): the row stays as it is, so
    /// its version is not a condition. Such an answer holds whatever another write does meanwhile — a later write
    /// only moves the last day forward or closes gaps, and never makes an already-counted day countable.
    public var checkInOnly = false
    public var row: StreakRow
    /// The check-in to keep under its key (nil for a freeze or a settings change).
    public var checkIn: (key: String, occurredAt: Date, zone: String, result: CheckInResult)?
    public var badges: [EarnedBadge]
    public var rewards: [String]
    public var announcements: Announcements
    public var at: Date
}

/// The events, frames and pushes a change announces; each tied to the badge or reward it is about (`nil`: to the
/// change itself), so a store writes only those whose badge or reward was really new.
public struct Announcements: Sendable {
    public var streak: GamificationEvents.StreakChanged?
    public var badges: [String: (event: GamificationEvents.BadgeEarned, frame: RealtimeFrame, push: PushRequest?)] = [:]
    public var rewards: [String: (event: GamificationEvents.RewardUnlocked, frame: RealtimeFrame, push: PushRequest?)] = [:]

    public init() {}
}

/// What the streak routes ask of the store.
public protocol StreakRecords: Sendable {
    /// The user's streak row, the answer of an earlier check-in under `key`, and whether the account was erased
    /// (a token issued before the deletion may still be valid for minutes).
    func streak(of user: UUID, app: AppID, key: String?) async throws -> (row: StreakRow?, earlier: CheckInResult?, erased: Bool)
    /// Commits `change` if the row's version is still the expected one; false when another write came first.
    func commit(_ change: StreakChange) async throws -> Bool
}

/// The streak's use cases: check in, use the freeze, set reminders. Each reads the row, decides here, and commits
/// conditionally on the version it read; a concurrent write (a second device at the same moment) makes it read
/// and decide again, so two check-ins never add two days.
public struct Streaks: Sendable {
    public let records: any StreakRecords
    public let achievements: Achievements
    public let clock: WallClock

    public init(records: any StreakRecords, achievements: Achievements, clock: WallClock) {
        self.records = records
        self.achievements = achievements
        self.clock = clock
    }

    public enum CheckInAnswer: Sendable, Equatable {
        case done(CheckInResult)
        /// The event time is outside the accepted window: (too far in the past, in the future).
        case outOfWindow(tooLate: Bool)
        /// The account was deleted.
        case erased
    }

    /// - Parameter zoneName: the zone as the app sent it (what is stored and answered); nil: `zone`'s identifier.
    public func checkIn(user: UUID, app: AppID, occurredAt: Date?, zone: TimeZone, zoneName: String? = nil, key: String) async throws -> CheckInAnswer {
        let now = clock.now()
        let occurredAt = occurredAt ?? now
        if occurredAt < now.addingTimeInterval(-StreakRules.lateTolerance) { return .outOfWindow(tooLate: true) }
        if occurredAt > now.addingTimeInterval(StreakRules.clockSkew) { return .outOfWindow(tooLate: false) }
        let checkIn = CheckIn(occurredAt: occurredAt, zone: zone, name: zoneName)
        return try await ConcurrentChanges.retrying("streak") { () -> CheckInAnswer? in
            let (row, earlier, erased) = try await records.streak(of: user, app: app, key: key)
            if erased { return .erased }
            if let earlier { return .done(earlier) }
            var state = row?.state ?? StreakState()
            let before = state
            let outcome = state.apply(checkIn)
            let counted = outcome != .alreadyCounted
            // The zone of "now": the latest check-in's by time, counted or not (a late one from elsewhere, or an older
            // one sent after, does not move the reminder).
            let latest = row.map { occurredAt >= ($0.latestCheckIn ?? $0.state.lastInstant ?? .distantPast) } ?? true
            let zoneName = latest ? checkIn.zoneName : row?.zone ?? checkIn.zoneName
            let reminders = row?.reminders ?? true
            var change = StreakChange(user: user, app: app, expectedVersion: row?.version,
                                      row: StreakRow(state: state, version: (row?.version ?? 0) + 1, zone: zoneName, reminders: reminders,
                                                     remindAt: Self.reminder(for: state, zone: zoneName, enabled: reminders)),
                                      checkIn: nil, badges: [], rewards: [], announcements: Announcements(), at: now)
            announce(&change, before: before, after: state, app: app, user: user, now: now)
            if let row, !counted, zoneName == row.zone {
                change.checkInOnly = true
                change.row = row
            }
            change.checkIn = (key, occurredAt, checkIn.zoneName,
                              CheckInResult(counted: counted, outcome: outcome, localDate: checkIn.day, late: occurredAt < now.addingTimeInterval(-15 * 60),
                                            state: state, zone: zoneName, badges: change.badges, rewards: change.rewards, answeredAt: now))
            if try await records.commit(change), let result = change.checkIn?.result { return .done(result) }
            return nil
        }
    }

    public enum FreezeAnswer: Sendable, Equatable {
        case restored(StreakRow, restoredDays: Int)
        case notOffered(used: Bool)
    }

    /// Uses the one streak freeze (REQ-STR-006); two devices claiming it at once restore it once.
    public func freeze(user: UUID, app: AppID) async throws -> FreezeAnswer {
        try await ConcurrentChanges.retrying("streak") { () -> FreezeAnswer? in
            let (row, _, _) = try await records.streak(of: user, app: app, key: nil)
            guard let row else { return .notOffered(used: false) }
            var state = row.state
            guard let restored = state.freeze() else { return .notOffered(used: state.freezeUsed) }
            let now = clock.now()
            var change = StreakChange(user: user, app: app, expectedVersion: row.version,
                                      row: StreakRow(state: state, version: row.version + 1, zone: row.zone, reminders: row.reminders,
                                                     remindAt: Self.reminder(for: state, zone: row.zone, enabled: row.reminders)),
                                      checkIn: nil, badges: [], rewards: [], announcements: Announcements(), at: now)
            announce(&change, before: row.state, after: state, app: app, user: user, now: now)
            return try await records.commit(change) ? .restored(change.row, restoredDays: restored) : nil
        }
    }

    /// Turns reminders on or off and moves them to `zone` (a user who travels without opening the app).
    public func setReminders(user: UUID, app: AppID, enabled: Bool, zone: String?) async throws -> StreakRow {
        try await ConcurrentChanges.retrying("streak") { () -> StreakRow? in
            let (row, _, _) = try await records.streak(of: user, app: app, key: nil)
            let zoneName = zone ?? row?.zone ?? "UTC"
            let state = row?.state ?? StreakState()
            let next = StreakRow(state: state, version: (row?.version ?? 0) + 1, zone: zoneName, reminders: enabled,
                                 remindAt: Self.reminder(for: state, zone: zoneName, enabled: enabled))
            let change = StreakChange(user: user, app: app, expectedVersion: row?.version, row: next, checkIn: nil, badges: [], rewards: [],
                                      announcements: Announcements(), at: clock.now())
            return try await records.commit(change) ? next : nil
        }
    }

    /// When to remind (REQ-STR-005): 2 hours before the local midnight that would break the streak — 22:00 on the
    /// day after the last counted one, in the user's zone now. None without a streak or with reminders off.
    public static func reminder(for state: StreakState, zone: String, enabled: Bool) -> Date? {
        guard enabled, state.current > 0, let lastDay = state.lastDay, let tz = TimeZoneName.zone(zone) else { return nil }
        return lastDay.adding(days: 2).start(in: tz).addingTimeInterval(-Self.reminderLead)
    }

    /// How long before the breaking midnight the reminder goes.
    public static let reminderLead: TimeInterval = 2 * 3600

    /// Conditional writes tried before giving up: each loses only to another write of the same user, so this is how
    /// many devices may write at the same moment; after a lost race a short random pause spreads the next tries.
    /// The streak milestones crossed and the streak's event: what `before` → `after` announces.
    private func announce(_ change: inout StreakChange, before: StreakState, after: StreakState, app: AppID, user: UUID, now: Date) {
        guard before != after else { return }
        change.announcements.streak = GamificationEvents.StreakChanged(
            userId: user.lowercased, app: app, current: after.current, longest: after.longest,
            lastActiveDay: after.lastDay?.description, updatedAt: now)
        let (badges, rewards) = achievements.streakMilestones(app: app, longestBefore: before.longest, after: after.longest)
        guard let catalogue = achievements.catalogues[app] else { return }
        for badge in badges {
            let earned = EarnedBadge(badge: badge.id, subject: "", earnedAt: now)
            change.badges.append(earned)
            change.announcements.badges[badge.id] = BadgeAnnouncement.make(earned, badge: badge, catalogue: catalogue, user: user)
        }
        for reward in rewards {
            change.rewards.append(reward.id)
            change.announcements.rewards[reward.id] = BadgeAnnouncement.make(reward: reward, catalogue: catalogue, user: user, at: now)
        }
    }
}

/// The event, celebration frame and push of a badge earned or a reward unlocked (REQ-BDG-002).
public enum BadgeAnnouncement {
    /// The real-time frame's type for a badge (the app plays its celebration).
    public static let badgeFrame = "badge_earned"
    public static let rewardFrame = "reward_unlocked"

    public static func make(_ earned: EarnedBadge, badge: GameCatalogue.Badge, catalogue: GameCatalogue, user: UUID)
        -> (event: GamificationEvents.BadgeEarned, frame: RealtimeFrame, push: PushRequest?) {
        let event = GamificationEvents.BadgeEarned(userId: user.lowercased, app: catalogue.app, badge: earned.badge,
                                                   subject: earned.subject.isEmpty ? nil : earned.subject, earnedAt: earned.earnedAt)
        var data: [String: JSONValue] = [
            "badge": .string(badge.id), "category": .string(badge.category), "icon": .string(badge.icon),
            "name": .object(badge.name.mapValues { .string($0) }), "description": .object(badge.description.mapValues { .string($0) }),
            "earnedAt": (try? JSONValue(encoding: earned.earnedAt)) ?? .null,
        ]
        if !earned.subject.isEmpty { data["subject"] = .string(earned.subject) }
        let frame = RealtimeFrame(to: [user.lowercased], app: catalogue.app, type: badgeFrame, data: .object(data))
        let push = PushRequest(userId: user.lowercased, app: catalogue.app, kind: catalogue.pushes.badgeEarned, delivery: .alert,
                               messageKey: catalogue.pushes.badgeEarned, args: localized("badge", badge.name),
                               collapseKey: "badge-\(badge.id)", ttlSeconds: 86_400, data: ["badge": badge.id])
        return (event, frame, push)
    }

    public static func make(reward: GameCatalogue.Reward, catalogue: GameCatalogue, user: UUID, at date: Date)
        -> (event: GamificationEvents.RewardUnlocked, frame: RealtimeFrame, push: PushRequest?) {
        let event = GamificationEvents.RewardUnlocked(userId: user.lowercased, app: catalogue.app, reward: reward.id, unlockedAt: date)
        var data: [String: JSONValue] = [
            "reward": .string(reward.id), "name": .object(reward.name.mapValues { .string($0) }),
            "description": .object(reward.description.mapValues { .string($0) }),
            "unlockedAt": (try? JSONValue(encoding: date)) ?? .null,
        ]
        if let title = reward.title { data["title"] = .object(title.mapValues { .string($0) }) }
        if reward.flame == true { data["flame"] = .bool(true) }
        let frame = RealtimeFrame(to: [user.lowercased], app: catalogue.app, type: rewardFrame, data: .object(data))
        let push = PushRequest(userId: user.lowercased, app: catalogue.app, kind: catalogue.pushes.rewardUnlocked, delivery: .alert,
                               messageKey: catalogue.pushes.rewardUnlocked, args: localized("reward", reward.name),
                               collapseKey: "reward-\(reward.id)", ttlSeconds: 86_400, data: ["reward": reward.id])
        return (event, frame, push)
    }

    /// A push argument in every language: `name` (the default language's) and `name.<language>`, which push-worker
    /// uses for a device in that language.
    static func localized(_ name: String, _ texts: GameCatalogue.Texts) -> [String: String] {
        var args: [String: String] = [:]
        for (language, text) in texts { args["\(name).\(language)"] = text }
        args[name] = texts["en"] ?? texts.values.sorted().first ?? ""
        return args
    }
}

/// The streak reminder's push (REQ-STR-005).
public enum Reminders {
    public static func push(user: UUID, catalogue: GameCatalogue, current: Int) -> PushRequest {
        PushRequest(userId: user.lowercased, app: catalogue.app, kind: catalogue.pushes.streakReminder, delivery: .alert,
                    messageKey: catalogue.pushes.streakReminder, args: ["streak": String(current)], collapseKey: "streak-reminder",
                    ttlSeconds: Int(Streaks.reminderLead), data: ["streak": String(current)])
    }
}
