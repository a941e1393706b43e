import LanternContracts
import LanternRedis

/// One entry of a Redis stream as `XREAD`, `XREADGROUP` and `XAUTOCLAIM` return it: `[id, [field, value, …]]`.
/// Fields are read by name; the envelope is in the field `event` (what `EventPublisher` writes).
public struct StreamEntry: Sendable, Equatable {
    public var id: String
    public var fields: [String: String]

    public init?(_ entry: RedisValue) {
        guard let parts = entry.array, parts.count == 2, let id = parts[0].string else { return nil }
        self.id = id
        var fields: [String: String] = [:]
        let flat = parts[1].array ?? []  // nil when the entry was deleted (XAUTOCLAIM on a trimmed stream)
        var i = 0
        while i + 1 < flat.count {
            if let k = flat[i].string, let v = flat[i + 1].string { fields[k] = v }
            i += 2
        }
        self.fields = fields
    }

    /// The decoded envelope, or nil when the `event` field is missing or is not one.
    public var envelope: EventEnvelope? { fields["event"].flatMap { try? EventEnvelope.decode($0) } }

    /// The entries of an `XREAD`/`XREADGROUP` reply (`[[stream, [entry, …]], …]`), in order; none for a timeout.
    public static func entries(ofXREAD reply: RedisValue) -> [StreamEntry] {
        (reply.array ?? []).flatMap { stream -> [StreamEntry] in
            guard let pair = stream.array, pair.count == 2 else { return [] }
            return (pair[1].array ?? []).compactMap(StreamEntry.init)
        }
    }
}
