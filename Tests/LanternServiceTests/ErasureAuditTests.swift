import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import LanternRedis
import LanternService
import LanternTestSupport
import PostgresNIO
import Synchronization
import Testing

@Suite("LanternService: the erasure audit — a deletion acknowledged in a group without being handled is found and handled (#44 item 5)")
struct ErasureAuditTests {
    @Test("another service's Redis user takes health-brain's user.deleted out of its group (XREADGROUP under its name, XACK); the audit erases the user, once; a pending entry is left to its group")
    func stolenDeletion() async throws {
        try await TestEnvironment.withDatabase { url in
            try await TestEnvironment.withPostgres(url) { postgres in
                let logger = TestEnvironment.logger
                try await Migrator.migrate(schema: "audit", migrations: EventMigrations.all + [ErasedUsers.migration], client: postgres, logger: logger)
                let prefix = TestEnvironment.uniquePrefix()
                let streams = StreamNames(prefix: prefix)
                let stream = streams.name(of: IdentityEvents.stream)
                let admin = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
                let thief = RedisClient(endpoint: try RedisEndpoint(url: try await TestEnvironment.redisURL(for: "content", prefix: prefix)), size: 1)
                let service = RedisClient(endpoint: try RedisEndpoint(url: try await TestEnvironment.redisURL(for: "health-brain", prefix: prefix)), size: 1)
                defer { Task { await admin.shutdown(); await thief.shutdown(); await service.shutdown() } }
                try await admin.send(["XGROUP", "CREATE", stream, "health-brain", "0", "MKSTREAM"])

                let stolen = UUID(), pending = UUID()
                for user in [stolen, pending] {
                    let event = try EventEnvelope(IdentityEvents.UserDeleted(userId: user.lowercased, app: .symbi), producer: "identity",
                                                  subject: user.lowercased, occurredAt: Date())
                    try await EventPublisher(redis: admin).publish(event, to: stream)
                }
                // content's credential reads the first entry as if it were health-brain, and acknowledges it: nothing in
                // Redis refuses either (ACLs name keys, not groups).
                let taken = try await thief.send(["XREADGROUP", "GROUP", "health-brain", "intruder", "COUNT", "1", "STREAMS", stream, ">"])
                let entry = try #require(StreamEntry.entries(ofXREAD: taken).first)
                #expect(try await thief.send(["XACK", stream, "health-brain", entry.id]).int == 1)
                // The second is delivered to health-brain's own consumer and still being handled: pending.
                _ = try await service.send(["XREADGROUP", "GROUP", "health-brain", "worker", "COUNT", "1", "STREAMS", stream, ">"])

                let handled = Mutex<[String]>([])
                var handlers = EventHandlers()
                handlers.on(IdentityEvents.UserDeleted.self) { deleted, event in
                    handled.withLock { $0.append(deleted.userId) }
                    let user = try UndecodablePayload.uuid(deleted.userId, field: "userId")
                    try await ProcessedEvents(schema: "audit", consumer: "audit.identity").once(event.id, client: postgres, logger: logger) { connection in
                        try await ErasedUsers.record(user, at: Date(), schema: "audit", on: connection, logger: logger)
                    }
                }
                let audit = ErasureAudit(redis: service, postgres: postgres, schema: "audit", stream: stream, group: "health-brain", handlers: handlers,
                                         clock: .system, logger: logger, settle: .zero)
                #expect(try await audit.run() == 1)
                #expect(handled.withLock { $0 } == [stolen.lowercased])
                #expect(try await ErasedUsers.contains(stolen, schema: "audit", client: postgres, logger: logger))
                #expect(!(try await ErasedUsers.contains(pending, schema: "audit", client: postgres, logger: logger)))
                // Done once: the next pass finds the tombstone.
                #expect(try await audit.run() == 0)
            }
        }
    }
}
