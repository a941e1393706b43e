import Foundation
import LanternContracts
import LanternCore
import LanternEvents

/// `user.deleted` erases everything content keeps about the user (Lucky Day's profile, fortunes and schedules;
/// AstroSvitla's reports and purchases, leaving tombstones of the transactions), once per event.
struct IdentityEventsConsumer: Sendable {
    let profiles: ProfileStore
    let reports: ReportStore
    let clock: WallClock
    let processed = ProcessedEvents(schema: ContentResources.schema, consumer: "content.identity")

    var handlers: EventHandlers {
        var handlers = EventHandlers()
        handlers.on(IdentityEvents.UserDeleted.self) { deleted, event in
            let user = try UndecodablePayload.uuid(deleted.userId, field: "userId")
            try await processed.once(event.id, client: profiles.client, logger: profiles.logger) { connection in
                try await profiles.erase(user, on: connection)
                try await reports.erase(user, at: clock.now(), on: connection)
            }
        }
        return handlers
    }
}
