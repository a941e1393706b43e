import Foundation
import LanternCore
import LanternDatabase
import LanternTestSupport
import PostgresNIO
import Synchronization
import Testing

private let logger = TestEnvironment.logger

/// A one-shot signal between two tasks of a test.
private struct Signal: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    init() { (stream, continuation) = AsyncStream<Void>.makeStream() }
    func fire() { continuation.yield() }
    func wait() async { for await _ in stream { return } }
}

/// A flag one task sets and another reads.
private final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

@Suite("LanternDatabase: the erasure fence (ErasedUsers)")
struct ErasedUsersTests {
    static let schema = "fence"

    /// A schema with one table of user rows, and the fence.
    static func withFence(_ body: @Sendable (PostgresClient) async throws -> Void) async throws {
        try await TestEnvironment.withDatabase { url in
            try await TestEnvironment.withPostgres(url) { client in
                try await Migrator.migrate(schema: schema, migrations: [
                    Migration(id: "0001_notes", sql: "CREATE TABLE {{schema}}.notes (user_id uuid NOT NULL, text text NOT NULL)"),
                    ErasedUsers.migration,
                ], client: client, logger: logger)
                try await body(client)
            }
        }
    }

    static func notes(of user: UUID, _ client: PostgresClient) async throws -> Int {
        for try await count in try await client.query("SELECT count(*)::int FROM fence.notes WHERE user_id = \(user)", logger: logger).decode(Int.self) {
            return count
        }
        return 0
    }

    /// The erasure of `user` as a service's `user.deleted` consumer does it: the record first, then the rows.
    static func erase(_ user: UUID, _ client: PostgresClient, between: @Sendable () async -> Void = {}) async throws {
        try await client.transaction(logger: logger) { connection in
            try await ErasedUsers.record(user, at: Date(), schema: schema, on: connection, logger: logger)
            await between()
            try await connection.query("DELETE FROM fence.notes WHERE user_id = \(user)", logger: logger)
        }
    }

    @Test("a write admitted before the erasure commits first and is erased with the rest")
    func admittedBefore() async throws {
        try await Self.withFence { client in
            let user = UUID(), admitted = Signal(), commit = Signal()
            let erased = Flag()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await client.transaction(admitting: user, schema: Self.schema, logger: logger) { connection in
                        try await connection.query("INSERT INTO fence.notes VALUES (\(user), 'written while the account was deleted')", logger: logger)
                        admitted.fire()
                        await commit.wait()
                    }
                }
                await admitted.wait()
                group.addTask {
                    try await Self.erase(user, client)
                    erased.set()
                }
                // The erasure waits for the write it would otherwise miss.
                try await Task.sleep(for: .milliseconds(500))
                let finished = erased.isSet
                #expect(!finished, "the erasure did not wait for the admitted write")
                commit.fire()
                try await group.waitForAll()
            }
            #expect(try await Self.notes(of: user, client) == 0)
            #expect(try await ErasedUsers.contains(user, schema: Self.schema, client: client, logger: logger))
        }
    }

    @Test("a write that comes while the erasure runs waits for it, then finds the user erased and writes nothing")
    func arrivingDuring() async throws {
        try await Self.withFence { client in
            let user = UUID(), recorded = Signal(), finish = Signal()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await Self.erase(user, client, between: { recorded.fire(); await finish.wait() }) }
                await recorded.wait()
                group.addTask {
                    await #expect(throws: AccountErased.self) {
                        try await client.transaction(admitting: user, schema: Self.schema, logger: logger) { connection in
                            try await connection.query("INSERT INTO fence.notes VALUES (\(user), 'too late')", logger: logger)
                        }
                    }
                }
                try await Task.sleep(for: .milliseconds(300))
                finish.fire()
                try await group.waitForAll()
            }
            #expect(try await Self.notes(of: user, client) == 0)
        }
    }

    @Test("a single statement admits itself: after the erasure it inserts nothing; other users are not held up")
    func singleStatement() async throws {
        try await Self.withFence { client in
            let user = UUID(), other = UUID()
            try await Self.erase(user, client)
            try await Self.erase(user, client)  // a redelivered user.deleted changes nothing
            for who in [user, other] {
                try await client.query("""
                    INSERT INTO fence.notes SELECT \(who), 'a late event' WHERE fence.admit_user(\(ErasedUsers.hash(who)))
                    """, logger: logger)
            }
            #expect(try await Self.notes(of: user, client) == 0)
            #expect(try await Self.notes(of: other, client) == 1)
            await #expect(throws: AccountErased.self) {
                try await client.transaction(admitting: user, schema: Self.schema, logger: logger) { _ in }
            }
            try await client.transaction(admitting: other, schema: Self.schema, logger: logger) { _ in }
            // The migration may run again over a schema that had the table before the fence (IF NOT EXISTS, OR REPLACE).
            try await client.transaction(logger: logger) { connection in
                for statement in SQLScript.statements(ErasedUsers.migration.sql.replacingOccurrences(of: "{{schema}}", with: Self.schema)) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
        }
    }
}
