import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import Logging

/// `user.deleted` removes every picture of the user's evolutions and forgets their jobs (Req 11.4), once per event.
/// The erasure is recorded first, so a drawing still in flight deletes its own picture when it finishes
/// (`EvolutionStudio`), and a request still on its way is dropped.
struct IdentityEventsConsumer: Sendable {
    let store: JobStore
    let files: any EvolutionImageFiles
    let clock: WallClock
    let processed = ProcessedEvents(schema: JobStore.schema, consumer: "evolution-worker.identity")

    var handlers: EventHandlers {
        var handlers = EventHandlers()
        handlers.on(IdentityEvents.UserDeleted.self) { deleted, event in
            let user = try UndecodablePayload.uuid(deleted.userId, field: "userId")
            // The pictures go inside the transaction that forgets the rows: if a delete fails, nothing commits and the
            // event comes back with every key still listed; if the commit fails, the deletes are simply done again.
            _ = try await processed.once(event.id, client: store.client, logger: store.logger) { connection in
                for key in try await store.erase(user, at: clock.now(), on: connection) { try await files.delete(key: key) }
            }
        }
        return handlers
    }
}
