import Foundation
import LanternContracts
import LanternEvents

/// `user.deleted` erases everything content keeps about the user (profile, fortunes, schedules), once per event.
struct IdentityEventsConsumer: Sendable {
    let profiles: ProfileStore
    let processed = ProcessedEvents(schema: ContentResources.schema, consumer: "content.identity")

    var handlers: EventHandlers {
        var handlers = EventHandlers()
        handlers.on(IdentityEvents.UserDeleted.self) { deleted, event in
            let user = try UndecodablePayload.uuid(deleted.userId, field: "userId")
            try await processed.once(event.id, client: profiles.client, logger: profiles.logger) { connection in
                try await profiles.erase(user, on: connection)
            }
        }
        return handlers
    }
}
