import LanternContracts
import LanternRedis
import Metrics

/// Where messages that cannot succeed go: `<prefix>.dlq.<stream>`, capped at about 10,000 entries, one entry per
/// message with the fields operators read (docs/events.md, "Delivery").
public struct DeadLetters: Sendable {
    public static let maxLength = 10_000
    let redis: RedisClient
    let streams: StreamNames

    public init(redis: RedisClient, streams: StreamNames) {
        self.redis = redis
        self.streams = streams
    }

    /// Appends one dead letter for a message of `stream` read by `group`: `event` (the original JSON), `stream`,
    /// `entry` (the original entry id, empty when there is none), `group`, `deliveries`, `reason`, then `extra`.
    public func add(event: String, stream: String, entry: String, group: String, deliveries: Int, reason: String,
                    extra: [(String, String)] = []) async throws {
        var fields = ["event", event, "stream", stream, "entry", entry, "group", group, "deliveries", String(deliveries), "reason", reason]
        for (key, value) in extra { fields += [key, value] }
        try await redis.send(["XADD", streams.deadLetter(of: stream), "MAXLEN", "~", String(Self.maxLength), "*"] + fields)
        Counter(label: "lantern_events_dead_lettered_total", dimensions: [("stream", stream), ("group", group)]).increment()
    }
}
