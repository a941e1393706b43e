import Foundation
import LanternContracts
import LanternEvents

extension DeviceRegistry {
    /// The registry's handlers of identity's events; other types are not its business.
    var handlers: EventHandlers {
        var handlers = EventHandlers()
        handlers.on(IdentityEvents.DeviceRegistered.self) { device, event in try await registered(device, at: event.occurredAt, eventID: event.id) }
        handlers.on(IdentityEvents.DeviceRemoved.self) { removed, event in try await self.removed(removed, at: event.occurredAt) }
        handlers.on(IdentityEvents.UserDeleted.self) { deleted, event in try await userDeleted(deleted, at: event.occurredAt) }
        return handlers
    }
}
