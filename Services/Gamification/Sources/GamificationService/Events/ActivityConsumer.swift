import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import Logging

/// The events the catalogues count (`roast.generated`, `roast.shared`, `roast.favourited`…), a batch at a time:
/// decoded into their contract's type (a payload that does not match it is a poison message, dead-lettered), then
/// handed to the engine by field name. Which types, and so which streams, comes from the catalogues.
struct ActivityConsumer: Sendable {
    let tally: Tally
    let logger: Logger

    /// The streams to consume and the types counted on each.
    var streams: [EventStream: [any EventPayload.Type]] {
        var streams: [EventStream: [any EventPayload.Type]] = [:]
        for type in EventCatalogue.all where tally.achievements.countedEvents.contains(type.eventType) {
            streams[type.stream, default: []].append(type)
        }
        return streams
    }

    /// Handles a batch from one stream: each envelope is done (counted, or counted by no rule), to retry (the
    /// database failed), or poison (dead-lettered at once).
    func handle(batch: [EventEnvelope], types: [any EventPayload.Type]) async -> [StreamConsumer.BatchOutcome] {
        var events: [ActivityEvent] = []
        var ok = [StreamConsumer.BatchOutcome](repeating: .done, count: batch.count)
        var positions: [Int] = []
        for (index, envelope) in batch.enumerated() {
            guard let type = types.first(where: { $0.eventType == envelope.type }) else { continue }
            do {
                _ = try Self.decode(envelope, as: type)
                guard let user = envelope.data["userId"]?.stringValue.flatMap(UUID.init(uuidString:)) else {
                    throw UndecodablePayload("field userId is not a UUID")
                }
                events.append(ActivityEvent(id: envelope.id, type: envelope.type, user: user, occurredAt: envelope.occurredAt, fields: envelope.data))
                positions.append(index)
            } catch {
                ok[index] = .poison("\(error)")
            }
        }
        guard !events.isEmpty else { return ok }
        do {
            try await tally.record(events)
        } catch {
            logger.warning("activity batch failed; each event will be retried", metadata: ["events": "\(events.count)", "error": "\(error)"])
            for index in positions { ok[index] = .retry }
        }
        return ok
    }

    private static func decode<P: EventPayload>(_ envelope: EventEnvelope, as type: P.Type) throws -> P {
        do { return try envelope.payload(as: P.self) } catch { throw UndecodablePayload(envelope.type, error) }
    }
}
