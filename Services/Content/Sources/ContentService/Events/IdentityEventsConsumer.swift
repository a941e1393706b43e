import ContentKit
import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import Logging
import PostgresNIO

/// `user.deleted` erases everything content keeps about the user, every app's part (Lucky Day's profile, fortunes
/// and schedules; AstroSvitla's reports and purchases, leaving tombstones of the transactions) in one transaction,
/// once per event.
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
                for app in apps { try await app.erase(user, at: clock.now(), on: connection) }
            }
        }
        return handlers
    }
}
