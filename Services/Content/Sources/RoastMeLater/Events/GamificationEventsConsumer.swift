import ContentKit
import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import Logging
import PostgresNIO

/// content's copy of what gamification tells about RoastMeLater users: `reward.unlocked` of `premium_roasts` unlocks the
/// Premium Roast category (REQ-STR-008); `streak.changed` is the streak the large widget shows. Once per event
/// (`content.gamification`).
struct GamificationEventsConsumer: Sendable {
    let store: RoastStore
    let daily: DailyRoastStore
    let postgres: PostgresClient
    let logger: Logger
    let processed = ProcessedEvents(schema: ContentSchema.name, consumer: "content.gamification")

    var consumer: ContentConsumer {
        var handlers = EventHandlers()
        handlers.on(GamificationEvents.RewardUnlocked.self) { granted, event in
            guard granted.app == .roastmelater else { return }
            let user = try UndecodablePayload.uuid(granted.userId, field: "userId")
            try await processed.once(event.id, client: postgres, logger: logger) { connection in
                try await store.grant(granted.reward, user: user, at: granted.unlockedAt, on: connection)
            }
        }
        handlers.on(GamificationEvents.StreakChanged.self) { streak, event in
            guard streak.app == .roastmelater else { return }
            let user = try UndecodablePayload.uuid(streak.userId, field: "userId")
            let lastActive = try streak.lastActiveDay.map { text in
                guard let day = LocalDay(text) else { throw UndecodablePayload("field lastActiveDay is not a date YYYY-MM-DD: '\(text)'") }
                return day
            }
            try await processed.once(event.id, client: postgres, logger: logger) { connection in
                try await daily.updateStreak(user, current: streak.current, longest: streak.longest, lastActiveDay: lastActive, at: streak.updatedAt, on: connection)
            }
        }
        return ContentConsumer(stream: .events(GamificationEvents.producer), handlers: handlers)
    }
}
