import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import Logging
import PostgresNIO

/// `user.deleted` erases everything gamification keeps about the user, in every app, in one transaction, once per
/// event.
struct IdentityEventsConsumer: Sendable {
    let store: ActivityStore
    let clock: WallClock
    let processed = ProcessedEvents(schema: StreakStore.schema, consumer: "gamification.identity")

    var handlers: EventHandlers {
        var handlers = EventHandlers()
        handlers.on(IdentityEvents.UserDeleted.self) { deleted, event in
            let user = try UndecodablePayload.uuid(deleted.userId, field: "userId")
            try await processed.once(event.id, client: store.client, logger: store.logger) { connection in
                try await store.erase(user, at: clock.now(), on: connection)
            }
        }
        return handlers
    }
}
