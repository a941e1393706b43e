import ContentKit
import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import Logging
import PostgresNIO

/// content's copy of what gamification tells about RoastMeLater users: `reward.unlocked` of `premium_roasts` unlocks the
/// Premium Roast category (REQ-STR-008); `streak.changed` is the streak the large widget shows.
///
/// Each event is one statement that is idempotent by itself (a reward is granted once; the newest streak wins), so
/// no processed-event id is kept: a transaction recording one cost four round trips per event, and a day's first
/// check-ins arrive as a burst of them. Both skip users erased meanwhile (`erased_users`).
struct GamificationEventsConsumer: Sendable {
    let store: RoastStore
    let daily: DailyRoastStore

    var consumer: ContentConsumer {
        var handlers = EventHandlers()
        handlers.on(GamificationEvents.RewardUnlocked.self) { granted, _ in
            guard granted.app == .roastmelater else { return }
            let user = try UndecodablePayload.uuid(granted.userId, field: "userId")
            try await store.grant(granted.reward, user: user, at: granted.unlockedAt)
        }
        handlers.on(GamificationEvents.StreakChanged.self) { streak, _ in
            guard streak.app == .roastmelater else { return }
            let user = try UndecodablePayload.uuid(streak.userId, field: "userId")
            let lastActive = try streak.lastActiveDay.map { text in
                guard let day = LocalDay(text) else { throw UndecodablePayload("field lastActiveDay is not a date YYYY-MM-DD: '\(text)'") }
                return day
            }
            try await daily.updateStreak(user, current: streak.current, longest: streak.longest, lastActiveDay: lastActive, at: streak.updatedAt)
        }
        return ContentConsumer(stream: .events(GamificationEvents.producer), handlers: handlers)
    }
}
