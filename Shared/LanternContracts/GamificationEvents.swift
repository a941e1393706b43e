import Foundation

/// What `gamification` announces on `lantern.events.gamification` (docs/events.md, "gamification"). Declared
/// before its producer exists (issue #26): content already keeps its copy of the rewards it gates on.
public enum GamificationEvents {
    public static let producer = "gamification"

    /// A reward a user earned (RoastMeLater: the Premium Roast category after a 7-day streak, REQ-STR-008). A reward
    /// once granted stays.
    public struct RewardGranted: EventPayload, Equatable {
        public static let eventType = "reward.granted"
        public static var stream: EventStream { .events(GamificationEvents.producer) }
        public var userId: String
        public var app: AppID
        /// The reward's id in the app's catalogue, e.g. `premium_roasts`.
        public var reward: String
        public var grantedAt: Date

        public init(userId: String, app: AppID, reward: String, grantedAt: Date) {
            self.userId = userId
            self.app = app
            self.reward = reward
            self.grantedAt = grantedAt
        }
    }

    /// A user's streak changed: it grew, was kept by a freeze, or broke (REQ-STR). content keeps its copy for the
    /// RoastMeLater widget, which must not call across services.
    public struct StreakChanged: EventPayload, Equatable {
        public static let eventType = "streak.changed"
        public static var stream: EventStream { .events(GamificationEvents.producer) }
        public var userId: String
        public var app: AppID
        /// Days in a row, 0 once broken.
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
