import Foundation
import LanternCore
import LanternEvents
import LanternRedis
import Logging
import Metrics
import PostgresNIO

/// Reads the state behind the operations gauges every 15 s (a scrape's length; `ServiceBuilder` runs it as periodic
/// work): what a counter cannot say — how far behind each consumer group is, how much waits in a dead-letter stream
/// or an outbox, how many sockets are open. `ServiceBuilder` adds the samples of the parts it assembles; a service
/// adds its own (`addGaugeSample`). A sample that fails leaves its gauge as it was and is logged at debug: the
/// operations port must not depend on Redis or PostgreSQL answering (readiness says whether they do).
struct GaugeSampler: Sendable {
    typealias Sample = @Sendable () async throws -> Void

    let samples: [Sample]
    let logger: Logger

    /// Takes every sample once; returns how many were read.
    func sampleAll() async -> Int {
        var read = 0
        for sample in samples {
            do {
                try await sample()
                read += 1
            } catch {
                logger.debug("gauge sample failed", metadata: ["error": "\(error)"])
            }
        }
        return read
    }
}

/// The samples of the event bus and the outbox.
enum BusGauges {
    /// Lag and pending entries of `group` on `stream` (XINFO GROUPS; `lag` needs Redis 7), and the lengths of the
    /// stream and of its dead-letter stream.
    static func consumer(redis: RedisClient, stream: String, deadLetters: String, group: String) -> GaugeSampler.Sample {
        {
            let labels = [("stream", stream), ("group", group)]
            if let groups = try await redis.send("XINFO", "GROUPS", stream).array {
                for entry in groups {
                    let fields = Self.fields(entry)
                    guard fields["name"]?.string == group else { continue }
                    if let pending = fields["pending"]?.int { Gauge(label: "lantern_stream_consumer_pending", dimensions: labels).record(pending) }
                    if let lag = fields["lag"]?.int { Gauge(label: "lantern_stream_consumer_lag", dimensions: labels).record(lag) }
                }
            }
            for name in [stream, deadLetters] {
                if let length = try await redis.send("XLEN", name).int { Gauge(label: "lantern_stream_length", dimensions: [("stream", name)]).record(length) }
            }
        }
    }

    /// Events waiting in `schema`'s outbox and the age of the oldest.
    static func outbox(postgres: PostgresClient, schema: String) -> GaugeSampler.Sample {
        {
            let rows = try await postgres.query("""
                SELECT count(*)::bigint, COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 FROM \(unescaped: schema).outbox
                """)
            for try await (count, oldest) in rows.decode((Int64, Double).self) {
                Gauge(label: "lantern_outbox_backlog", dimensions: [("schema", schema)]).record(count)
                Gauge(label: "lantern_outbox_oldest_seconds", dimensions: [("schema", schema)]).record(oldest)
            }
        }
    }

    /// The PostgreSQL connections of every instance of the service, by state (`active`: running a query, `idle`:
    /// waiting in a pool), from `pg_stat_activity` by `application_name`. The sample's own query counts as active.
    static func connections(postgres: PostgresClient, applicationName: String) -> GaugeSampler.Sample {
        {
            var counts = ["active": 0, "idle": 0, "idle in transaction": 0]
            let rows = try await postgres.query("""
                SELECT COALESCE(state, 'unknown'), count(*)::bigint FROM pg_stat_activity WHERE application_name = \(applicationName) GROUP BY 1
                """)
            for try await (state, count) in rows.decode((String, Int64).self) { counts[state] = Int(count) }
            for (state, count) in counts {
                Gauge(label: "lantern_postgres_connections", dimensions: [("state", state)]).record(count)
            }
        }
    }

    /// A reply of alternating names and values (RESP2 maps) as a dictionary.
    static func fields(_ value: RedisValue) -> [String: RedisValue] {
        guard let items = value.array else { return [:] }
        var fields: [String: RedisValue] = [:]
        var index = 0
        while index + 1 < items.count {
            if let name = items[index].string { fields[name] = items[index + 1] }
            index += 2
        }
        return fields
    }
}
