import Foundation
import LanternContracts
import LanternCore

/// Everything stored about a user in one app, as one read returns it.
public struct ProfileData: Sendable, Equatable {
    public struct Counter: Sendable, Equatable {
        public var metric: String
        public var subject: String
        public var value: Int
        public var size: Int?
    }

    public var row: StreakRow?
    public var counters: [Counter] = []
    public var badges: [EarnedBadge] = []
    public var rewards: [String: Date] = [:]

    public init() {}
}

/// The export (Req: the user's data as JSON): the profile's data, the check-ins still kept and the sets' members.
public struct ExportData: Sendable, Equatable {
    public struct CheckInRecord: Sendable, Equatable, Encodable {
        public var key: String
        public var zone: String
        public var localDate: String
        public var occurredAt: Date
        public var counted: Bool
    }

    public struct Member: Sendable, Equatable, Encodable {
        public var metric: String
        public var subject: String
        public var member: String
    }

    public var profile: ProfileData
    public var checkIns: [CheckInRecord]
    public var members: [Member]
}

public protocol ProfileRecords: Sendable {
    func profile(of user: UUID, app: AppID) async throws -> ProfileData
    func export(of user: UUID, app: AppID) async throws -> ExportData
}

/// The streak as the app shows it on the user's today.
public struct StreakView: Sendable, Equatable, Encodable {
    public struct Freeze: Sendable, Equatable, Encodable {
        /// A lost streak of 7+ days can be restored now (`POST /v1/gamification/streak/freeze`).
        public var offered: Bool
        /// How many days it would bring back.
        public var restores: Int?
        /// The one freeze was used.
        public var used: Bool
    }

    /// Days in a row as of `today` (0 once a whole day was missed).
    public var current: Int
    public var longest: Int
    public var totalDays: Int
    /// The last local day that counted.
    public var lastActiveDate: String?
    /// The user's local day the answer is about, and its zone.
    public var today: String
    public var timeZone: String
    public var countedToday: Bool
    /// Alive, but today not counted yet.
    public var atRisk: Bool
    public var freeze: Freeze

    public init(_ state: StreakState, today: LocalDay, zone: String) {
        current = state.current(on: today)
        longest = state.longest
        totalDays = state.totalDays
        lastActiveDate = state.lastDay?.description
        self.today = today.description
        timeZone = zone
        countedToday = state.lastDay == today
        atRisk = state.atRisk(on: today)
        freeze = Freeze(offered: state.freezeOffer != nil, restores: state.freezeOffer, used: state.freezeUsed)
    }
}

public struct BadgeView: Sendable, Equatable, Encodable {
    public var id: String
    public var category: String
    public var icon: String
    public var name: String
    public var description: String
    public var earned: Bool
    public var earnedAt: Date?
    /// 0…1 toward the rule's target (1 once earned).
    public var progress: Double
    /// The group of a badge earned once per group (a collection id).
    public var subject: String?
}

public struct RewardView: Sendable, Equatable, Encodable {
    public var id: String
    public var name: String
    public var description: String
    public var unlocked: Bool
    public var unlockedAt: Date?
    public var progress: Double
    public var title: String?
    public var flame: Bool
}

/// The one call the app's profile screen needs (REQ-BDG-003, REQ-STR-004): streak, freeze offer, every badge with
/// its progress, title and rewards.
public struct Profile: Sendable, Equatable, Encodable {
    public struct Title: Sendable, Equatable, Encodable {
        public var id: String
        public var name: String
    }

    public struct Reminders: Sendable, Equatable, Encodable {
        public var enabled: Bool
        public var timeZone: String
        public var nextAt: Date?
    }

    public var app: String
    public var language: String
    public var streak: StreakView
    public var title: Title?
    /// The special flame icon (REQ-STR-009).
    public var flame: Bool
    public var badges: [BadgeView]
    public var rewards: [RewardView]
    public var reminders: Reminders

    public init(_ data: ProfileData, catalogue: GameCatalogue, language: String, zone requested: String?, now: Date) {
        let state = data.row?.state ?? StreakState()
        let zoneName = requested ?? data.row?.zone ?? "UTC"
        let today = LocalDay(now, in: TimeZoneName.zone(zoneName) ?? .gmt)
        app = catalogue.app.rawValue
        self.language = language
        streak = StreakView(state, today: today, zone: zoneName)
        var counters: [String: Int] = [:]
        for counter in data.counters where counter.subject.isEmpty { counters[counter.metric] = counter.value }
        var badges: [BadgeView] = []
        for badge in catalogue.badges {
            let view = { (earned: EarnedBadge?, progress: Double, subject: String?) in
                BadgeView(id: badge.id, category: badge.category, icon: badge.icon, name: catalogue.text(badge.name, in: language),
                          description: catalogue.text(badge.description, in: language), earned: earned != nil, earnedAt: earned?.earnedAt,
                          progress: earned != nil ? 1 : progress, subject: subject)
            }
            if badge.rule.complete != nil, let metric = badge.rule.metric?.key {
                // One per group the user has started, earned or not; none started: the badge with no group.
                let groups = data.counters.filter { $0.metric == metric && !$0.subject.isEmpty }.sorted { $0.subject < $1.subject }
                for group in groups {
                    let earned = data.badges.first { $0.badge == badge.id && $0.subject == group.subject }
                    badges.append(view(earned, min(1, Double(group.value) / Double(max(group.size ?? 1, 1))), group.subject))
                }
                if groups.isEmpty { badges.append(view(nil, 0, nil)) }
            } else {
                let earned = data.badges.first { $0.badge == badge.id }
                badges.append(view(earned, badge.progress(counters: counters, longestStreak: state.longest), nil))
            }
        }
        self.badges = badges
        rewards = catalogue.rewards.map { reward in
            let unlocked = data.rewards[reward.id]
            let target = reward.rule.streak ?? 1
            return RewardView(id: reward.id, name: catalogue.text(reward.name, in: language), description: catalogue.text(reward.description, in: language),
                              unlocked: unlocked != nil, unlockedAt: unlocked,
                              progress: unlocked != nil ? 1 : min(1, Double(state.longest) / Double(max(target, 1))),
                              title: reward.title.map { catalogue.text($0, in: language) }, flame: reward.flame ?? false)
        }
        // The title and flame of the highest unlocked reward that gives them.
        let titled = catalogue.rewards.filter { data.rewards[$0.id] != nil && $0.title != nil }.max { ($0.rule.streak ?? 0) < ($1.rule.streak ?? 0) }
        title = titled.flatMap { reward in reward.title.map { Title(id: reward.id, name: catalogue.text($0, in: language)) } }
        flame = catalogue.rewards.contains { data.rewards[$0.id] != nil && $0.flame == true }
        reminders = Reminders(enabled: data.row?.reminders ?? true, timeZone: data.row?.zone ?? zoneName, nextAt: data.row?.remindAt)
    }
}
