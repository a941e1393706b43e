import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import Logging
import PostgresNIO

/// `user.deleted` erases everything health-brain keeps about the user — metrics, days, sessions, evolutions, the pet
/// with its settings — in one transaction, once per event (Req 11.4 allows 7 days; this takes a moment).
struct IdentityEventsConsumer: Sendable {
    let store: PetStore
    let clock: WallClock
    let processed = ProcessedEvents(schema: PetStore.schema, consumer: "health-brain.identity")

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
