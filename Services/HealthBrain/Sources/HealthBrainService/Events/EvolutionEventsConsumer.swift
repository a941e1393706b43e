import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import Logging

/// `symbi.evolved` from evolution-worker: the form is recorded, becomes the current one, and the app hears of it
/// (frame and push). A redelivery finds the image recorded and changes nothing; an evolution of a user deleted
/// meanwhile matches no row and is dropped.
struct EvolutionEventsConsumer: Sendable {
    let store: PetStore
    let clock: WallClock

    var handlers: EventHandlers {
        var handlers = EventHandlers()
        handlers.on(SymbiEvents.Evolved.self) { evolved, _ in
            let evolution = try UndecodablePayload.uuid(evolved.evolutionId, field: "evolutionId")
            let user = try UndecodablePayload.uuid(evolved.userId, field: "userId")
            _ = try await store.evolved(evolved, evolution: evolution, user: user, now: clock.now())
        }
        return handlers
    }
}
