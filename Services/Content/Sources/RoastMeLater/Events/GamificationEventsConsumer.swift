import ContentKit
import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import Logging
import PostgresNIO

/// content's copy of what gamification granted RoastMeLater users: `reward.granted` of `premium_roasts` unlocks the
/// Premium Roast category (REQ-STR-008). Once per event (`content.gamification`).
struct GamificationEventsConsumer: Sendable {
    let store: RoastStore
    let postgres: PostgresClient
    let logger: Logger
    let processed = ProcessedEvents(schema: ContentSchema.name, consumer: "content.gamification")

    var consumer: ContentConsumer {
        var handlers = EventHandlers()
        handlers.on(GamificationEvents.RewardGranted.self) { granted, event in
            guard granted.app == .roastmelater else { return }
            let user = try UndecodablePayload.uuid(granted.userId, field: "userId")
            try await processed.once(event.id, client: postgres, logger: logger) { connection in
                try await store.grant(granted.reward, user: user, at: granted.grantedAt, on: connection)
            }
        }
        return ContentConsumer(stream: .events(GamificationEvents.producer), handlers: handlers)
    }
}
