import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import LanternRedis
import Logging
import Metrics
import PostgresNIO

/// Finds the `user.deleted` events a service's consumer group has acknowledged without erasing the user, and erases
/// them: what a stolen credential of another service could otherwise do unseen.
///
/// Redis ACLs name keys and commands, not consumer groups: a service's Redis user that reads identity's stream can
/// read it through any group's name (`XREADGROUP GROUP health-brain …`) and acknowledge what it took, so that
/// health-brain never sees a deletion. Nothing in Redis can refuse that; what the service can do is check. Each pass
/// reads the stream's `user.deleted` entries of the last `window` (older than `settle`, so the group has had its
/// chance), leaves out those still pending in the service's group (delivered, being handled or retried), and looks
/// for each user's tombstone in the service's schema (`ErasedUsers`, recorded with the erasure in one transaction).
/// A missing one means the entry was taken out of the group without being handled: it is logged as an error, counted
/// (`lantern_erasures_recovered_total`, which an alert watches) and handled now by the group's own handlers, which are
/// idempotent. So the group's acknowledgement of a deletion is never the last word (docs/deploy.md, "Redis users").
public struct ErasureAudit: Sendable {
    let redis: RedisClient
    let postgres: PostgresClient
    let schema: String
    let stream: String
    let group: String
    let handlers: EventHandlers
    let clock: WallClock
    let logger: Logger
    /// How far back a pass looks, and how old an entry must be before it is judged.
    let window: Duration
    let settle: Duration

    public init(redis: RedisClient, postgres: PostgresClient, schema: String, stream: String, group: String, handlers: EventHandlers,
                clock: WallClock, logger: Logger, window: Duration = .seconds(2 * 3600), settle: Duration = .seconds(120)) {
        self.redis = redis
        self.postgres = postgres
        self.schema = schema
        self.stream = stream
        self.group = group
        self.handlers = handlers
        self.clock = clock
        self.logger = logger
        self.window = window
        self.settle = settle
    }

    /// One pass; returns how many erasures it had to do.
    public func run() async throws -> Int {
        let now = clock.now()
        let first = "\(Self.millis(now.addingTimeInterval(-window.inSeconds)))-0"
        let last = "\(Self.millis(now.addingTimeInterval(-settle.inSeconds)))-0"
        let entries = try await redis.send(["XRANGE", stream, first, last, "COUNT", "20000"]).array?.compactMap(StreamEntry.init) ?? []
        let deletions = entries.compactMap { entry in entry.envelope.map { (entry.id, $0) } }.filter { $0.1.type == IdentityEvents.UserDeleted.eventType }
        guard !deletions.isEmpty else { return 0 }
        let pending = try await pendingIDs(from: first, to: last)
        var users: [(id: String, envelope: EventEnvelope, user: UUID)] = []
        for (id, envelope) in deletions where !pending.contains(id) {
            guard let text = try? envelope.payload(as: IdentityEvents.UserDeleted.self).userId, let user = UUID(uuidString: text) else { continue }
            users.append((id, envelope, user))
        }
        guard !users.isEmpty else { return 0 }
        let erased = try await tombstones(users.map(\.user))
        var recovered = 0
        for (id, envelope, user) in users where !erased.contains(user) {
            logger.error("user.deleted was acknowledged in this group without being handled: erasing now",
                         metadata: ["stream": "\(stream)", "group": "\(group)", "entry": "\(id)", "event": "\(envelope.id.lowercased)"])
            Counter(label: "lantern_erasures_recovered_total", dimensions: [("stream", stream), ("group", group)]).increment()
            try await handlers.handle(envelope)
            recovered += 1
        }
        return recovered
    }

    /// The ids of the window's entries still pending in the group.
    private func pendingIDs(from first: String, to last: String) async throws -> Set<String> {
        let reply = try await redis.send(["XPENDING", stream, group, first, last, "20000"])
        return Set((reply.array ?? []).compactMap { $0.array?.first?.string })
    }

    /// Which of `users` have their tombstone in the schema.
    private func tombstones(_ users: [UUID]) async throws -> Set<UUID> {
        var found = Set<UUID>()
        let hashes = users.map(ErasedUsers.hash)
        let rows = try await postgres.query("""
            SELECT x.user_id FROM unnest(\(users)::uuid[], \(hashes)::bytea[]) AS x(user_id, user_hash)
            WHERE EXISTS (SELECT 1 FROM \(unescaped: schema).erased_users e WHERE e.user_hash = x.user_hash)
            """, logger: logger)
        for try await user in rows.decode(UUID.self) { found.insert(user) }
        return found
    }

    static func millis(_ date: Date) -> Int64 { Int64(max(0, date.timeIntervalSince1970 * 1000)) }
}
