import Foundation

/// What `gamification` announces on `lantern.events.gamification` (docs/events.md, "gamification"): streaks, badges
/// and rewards. content keeps its copy of the rewards it gates on and of the streak its widget shows.
public enum GamificationEvents {
    public static let producer = "gamification"

    /// A reward a user unlocked (RoastMeLater: the Premium Roast category and premium share templates after a 7-day
    /// streak, REQ-STR-008; the Roast Master title and flame at 30, REQ-STR-009). A reward once unlocked stays.
    public struct RewardUnlocked: EventPayload, Equatable {
        public static let eventType = "reward.unlocked"
        public static var stream: EventStream { .events(GamificationEvents.producer) }
        public var userId: String
        public var app: AppID
        /// The reward's id in the app's catalogue, e.g. `premium_roasts`.
        public var reward: String
        public var unlockedAt: Date

        public init(userId: String, app: AppID, reward: String, unlockedAt: Date) {
            self.userId = userId
            self.app = app
            self.reward = reward
            self.unlockedAt = unlockedAt
        }
    }

    /// A user earned a badge (REQ-BDG); once per user, badge and subject.
    public struct BadgeEarned: EventPayload, Equatable {
        public static let eventType = "badge.earned"
        public static var stream: EventStream { .events(GamificationEvents.producer) }
        public var userId: String
        public var app: AppID
        /// The badge's id in the app's catalogue, e.g. `explorer`.
        public var badge: String
        /// For a badge earned once per group (a completed collection): the group, e.g. `classic_office`.
        public var subject: String?
        public var earnedAt: Date

        public init(userId: String, app: AppID, badge: String, subject: String?, earnedAt: Date) {
            self.userId = userId
            self.app = app
            self.badge = badge
            self.subject = subject
            self.earnedAt = earnedAt
        }
    }

    /// A user's streak changed: it grew, was kept by a freeze, or broke (REQ-STR). content keeps its copy for the
    /// RoastMeLater widget, which must not call across services.
    public struct StreakChanged: EventPayload, Equatable {
        public static let eventType = "streak.changed"
        public static var stream: EventStream { .events(GamificationEvents.producer) }
        public var userId: String
        public var app: AppID
        /// Days in a row up to `lastActiveDay`. A break is announced when the next check-in finds it; until then a
        /// copy shows 0 once `lastActiveDay` is before yesterday in the user's zone (as content's widget does).
        public var current: Int
        public var longest: Int
        /// The last local day (`YYYY-MM-DD`) that counted; the streak is still alive on the day after it.
        public var lastActiveDay: String?
        /// When gamification made the change: a copy keeps the latest and ignores an older one arriving late.
        public var updatedAt: Date

        public init(userId: String, app: AppID, current: Int, longest: Int, lastActiveDay: String?, updatedAt: Date) {
            self.userId = userId
            self.app = app
            self.current = current
            self.longest = longest
            self.lastActiveDay = lastActiveDay
            self.updatedAt = updatedAt
        }
    }
}
