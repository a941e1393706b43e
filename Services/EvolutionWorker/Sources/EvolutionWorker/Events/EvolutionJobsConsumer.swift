import Foundation
import LanternContracts
import LanternCore
import LanternEvents

/// `evolution.requested` on `lantern.jobs.evolution`: the job is recorded (once per evolution, whatever the
/// redeliveries) and acknowledged; the drawing happens in `EvolutionStudio`'s next pass, whose retries wait in the table, not in
/// the stream, so a provider that is down for hours holds nothing up.
struct EvolutionJobsConsumer: Sendable {
    let store: JobStore
    let clock: WallClock

    var handlers: EventHandlers {
        var handlers = EventHandlers()
        handlers.on(SymbiEvents.EvolutionRequested.self) { request, envelope in
            let evolution = try UndecodablePayload.uuid(request.evolutionId, field: "evolutionId")
            let user = try UndecodablePayload.uuid(request.userId, field: "userId")
            guard request.stage >= 1 else { throw UndecodablePayload("field stage must be 1 or more: \(request.stage)") }
            if let key = request.previousImageKey, !EvolutionJob.isImageKey(key) {
                throw UndecodablePayload("field previousImageKey is not an evolution image key: '\(key.prefix(80))'")
            }
            try await store.enqueue(request, evolution: evolution, user: user, envelope: try envelope.encoded(), at: clock.now())
        }
        return handlers
    }
}
