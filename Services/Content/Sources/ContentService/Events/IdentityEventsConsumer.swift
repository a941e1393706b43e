import ContentKit
import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import Logging
import PostgresNIO

/// `user.deleted` erases everything content keeps about the user, every app's part (Lucky Day's profile, fortunes
/// and schedules; AstroSvitla's reports and purchases, leaving tombstones of the transactions) in one transaction,
/// once per event. The erasure is recorded first (`ErasedUsers.record`): it waits for the apps' writes admitted
/// before, which are then erased with the rest, and turns away those that come after.
struct IdentityEventsConsumer: Sendable {
    let apps: [any ContentApp]
    let postgres: PostgresClient
    let clock: WallClock
    let logger: Logger
    let processed = ProcessedEvents(schema: ContentSchema.name, consumer: "content.identity")

    var handlers: EventHandlers {
        var handlers = EventHandlers()
        handlers.on(IdentityEvents.UserDeleted.self) { deleted, event in
            let user = try UndecodablePayload.uuid(deleted.userId, field: "userId")
            try await processed.once(event.id, client: postgres, logger: logger) { connection in
                let now = clock.now()
                try await ErasedUsers.record(user, at: now, schema: ContentSchema.name, on: connection, logger: logger)
                for app in apps { try await app.erase(user, at: now, on: connection) }
            }
        }
        return handlers
    }
}
