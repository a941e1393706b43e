import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import LanternRedis
import LanternTestSupport
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization
import Testing

func envelope(_ type: String = "test.happened", subject: String? = "u1", data: JSONValue = .object(["n": .number(1)])) -> EventEnvelope {
    EventEnvelope(type: type, occurredAt: Date(), producer: "tests", subject: subject, data: data)
}

@Suite("Event bus on Redis Streams")
struct EventBusTests {
    let streams = StreamNames(prefix: TestEnvironment.uniquePrefix())
    let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 2)

    func options(_ stream: String, consumer: String = "c1") -> StreamConsumer.Options {
        var options = StreamConsumer.Options(stream: stream, group: "tests", consumer: consumer)
        options.block = .milliseconds(100)
        options.claimIdle = .milliseconds(300)
        options.maxDeliveries = 3
        return options
    }

    @Test("an envelope round-trips with the contract's field names")
    func envelopeShape() throws {
        let event = envelope()
        let json = try event.encoded()
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        #expect(Set(object?.keys.map { $0 } ?? []) == ["id", "type", "version", "occurredAt", "producer", "subject", "traceparent", "data"])
        #expect(object?["traceparent"] is NSNull)
        #expect((object?["id"] as? String) == event.id.lowercased)
        #expect(try EventEnvelope.decode(json) == EventEnvelope.decode(try EventEnvelope.decode(json).encoded()))
    }

    @Test("published events reach a consumer group and are acknowledged")
    func publishConsume() async throws {
        let stream = streams.events("bus")
        let publisher = EventPublisher(redis: redis)
        let seen = Mutex<[UUID]>([])
        let sent = (0..<20).map { _ in envelope() }
        let consumer = StreamConsumer(endpoint: TestEnvironment.redisEndpoint, streams: streams, options: options(stream), logger: TestEnvironment.logger) { event in
            seen.withLock { $0.append(event.id) }
        }
        try await withService(consumer) {
            for event in sent { try await publisher.publish(event, to: stream) }
            #expect(try await eventually { seen.withLock { $0.count } == 20 })
        }
        #expect(seen.withLock { $0 } == sent.map(\.id))
        let pending = try await redis.send(["XPENDING", stream, "tests"])
        #expect(pending.array?.first?.int == 0)
        await redis.shutdown()
    }

    @Test("a consumer killed mid-message: the message is reclaimed by another and handled once")
    func crashedConsumerReclaimed() async throws {
        try await TestEnvironment.withDatabase { url in
            try await TestEnvironment.withPostgres(url) { client in
                try await Migrator.migrate(schema: "bus", migrations: EventMigrations.all + [Migration(id: "0001", sql: "CREATE TABLE {{schema}}.effects (event_id uuid NOT NULL)")],
                                           client: client, logger: TestEnvironment.logger)
                let stream = streams.events("crash")
                let processed = ProcessedEvents(schema: "bus", consumer: "tests")
                let started = Mutex(0)
                // Consumer A takes the message and "dies" inside the handler (never returns, its task is torn down).
                let crashing = StreamConsumer(endpoint: TestEnvironment.redisEndpoint, streams: streams, options: options(stream, consumer: "a"),
                                              logger: TestEnvironment.logger) { event in
                    started.withLock { $0 += 1 }
                    try await processed.once(event.id, client: client, logger: TestEnvironment.logger) { connection in
                        try await connection.query("INSERT INTO bus.effects VALUES (\(event.id))", logger: TestEnvironment.logger)
                        try await Task.sleep(for: .seconds(3600))  // crash point: the transaction never commits
                    }
                }
                let event = envelope()
                let task = Task { try await withService(crashing) { try await Task.sleep(for: .seconds(3600)) } }
                try await EventPublisher(redis: redis).publish(event, to: stream)
                #expect(try await eventually { started.withLock { $0 } == 1 })
                task.cancel()
                _ = await task.result

                let healthy = StreamConsumer(endpoint: TestEnvironment.redisEndpoint, streams: streams, options: options(stream, consumer: "b"),
                                             logger: TestEnvironment.logger) { event in
                    try await processed.once(event.id, client: client, logger: TestEnvironment.logger) { connection in
                        try await connection.query("INSERT INTO bus.effects VALUES (\(event.id))", logger: TestEnvironment.logger)
                    }
                }
                try await withService(healthy) {
                    let drained = try await eventually {
                        let pending = try await redis.send(["XPENDING", stream, "tests"])
                        return pending.array?.first?.int == 0
                    }
                    #expect(drained)
                }
                // Delivered again by hand: the idempotency record makes it a no-op.
                let again = try await processed.once(event.id, client: client, logger: TestEnvironment.logger) { _ in }
                #expect(again == false)
                let rows = try await client.query("SELECT count(*) FROM bus.effects WHERE event_id = \(event.id)", logger: TestEnvironment.logger)
                var count = -1
                for try await n in rows.decode(Int.self) { count = n }
                #expect(count == 1)
            }
        }
        await redis.shutdown()
    }

    @Test("a message that keeps failing ends in the dead-letter stream with its reason")
    func poisonMessageDeadLettered() async throws {
        let stream = streams.events("poison")
        let attempts = Mutex(0)
        let consumer = StreamConsumer(endpoint: TestEnvironment.redisEndpoint, streams: streams, options: options(stream), logger: TestEnvironment.logger) { _ in
            attempts.withLock { $0 += 1 }
            throw Problem.badRequest("cannot handle this")
        }
        let event = envelope("test.poison")
        try await withService(consumer) {
            try await EventPublisher(redis: redis).publish(event, to: stream)
            let deadLettered = try await eventually {
                let length = try await redis.send(["XLEN", streams.deadLetter(of: stream)])
                return length.int == 1
            }
            #expect(deadLettered)
        }
        #expect(attempts.withLock { $0 } == 3)
        let entries = try await redis.send(["XRANGE", streams.deadLetter(of: stream), "-", "+"])
        let fields = entries.array?.first?.array?[1].array?.compactMap(\.string) ?? []
        let dict = Dictionary(uniqueKeysWithValues: stride(from: 0, to: fields.count - 1, by: 2).map { (fields[$0], fields[$0 + 1]) })
        #expect(try EventEnvelope.decode(dict["event"] ?? "").id == event.id)
        #expect(dict["stream"] == stream)
        #expect(dict["reason"]?.contains("delivered 4 times") == true)
        let pending = try await redis.send(["XPENDING", stream, "tests"])
        #expect(pending.array?.first?.int == 0)
        await redis.shutdown()
    }

    @Test("a handler call that never ends is abandoned after handlerTimeout: the next messages are handled, and the message is retried")
    func stuckHandlerAbandoned() async throws {
        let stream = streams.events("stuck")
        let stuck = StuckCalls()
        let handled = Mutex<[UUID]>([])
        let first = envelope(), second = envelope()
        var options = options(stream)
        options.handlerTimeout = .seconds(1)
        // The first delivery of the first message never returns, cancelled or not (as a query on a connection that
        // died can); its redelivery and the other message are handled.
        let consumer = StreamConsumer(endpoint: TestEnvironment.redisEndpoint, streams: streams, options: options, logger: TestEnvironment.logger) { event in
            if event.id == first.id, stuck.count == 0 { await stuck.wait() }
            handled.withLock { $0.append(event.id) }
        }
        try await withService(consumer) {
            try await EventPublisher(redis: redis).publish(first, to: stream)
            try await EventPublisher(redis: redis).publish(second, to: stream)
            #expect(try await eventually { Set(handled.withLock { $0 }) == [first.id, second.id] }, "\(handled.withLock { $0 })")
            #expect(try await eventually { try await redis.send(["XPENDING", stream, "tests"]).array?.first?.int == 0 })
        }
        #expect(stuck.count == 1)
        stuck.release()
        await redis.shutdown()
    }

    @Test("an entry that is not a Lantern envelope is dead-lettered at once")
    func undecodableDeadLettered() async throws {
        let stream = streams.events("garbage")
        let handled = Mutex(0)
        let consumer = StreamConsumer(endpoint: TestEnvironment.redisEndpoint, streams: streams, options: options(stream), logger: TestEnvironment.logger) { _ in
            handled.withLock { $0 += 1 }
        }
        try await withService(consumer) {
            try await redis.send(["XADD", stream, "*", "event", "{not json"])
            try await redis.send(["XADD", stream, "*", "other", "field"])
            #expect(try await eventually { try await redis.send(["XLEN", streams.deadLetter(of: stream)]).int == 2 })
        }
        #expect(handled.withLock { $0 } == 0)
        await redis.shutdown()
    }
}

@Suite("Transactional outbox")
struct OutboxTests {
    @Test("events written while Redis is down are delivered after it returns; none lost")
    func redisOutage() async throws {
        let server = RedisServerProcess()
        try await server.start()
        let streams = StreamNames(prefix: TestEnvironment.uniquePrefix())
        let stream = streams.events("outage")
        let redis = RedisClient(endpoint: server.endpoint, size: 1, commandTimeout: .seconds(1))
        do {
            try await TestEnvironment.withDatabase { url in
                try await TestEnvironment.withPostgres(url) { client in
                    try await Migrator.migrate(schema: "outage", migrations: EventMigrations.all + [Migration(id: "0001", sql: "CREATE TABLE {{schema}}.things (id uuid PRIMARY KEY)")],
                                               client: client, logger: TestEnvironment.logger)
                    let outbox = Outbox(schema: "outage", streams: streams, producer: "tests")
                    let relay = OutboxRelay(outbox: outbox, client: client, publisher: EventPublisher(redis: redis), logger: TestEnvironment.logger,
                                            pollInterval: .milliseconds(50))
                    @Sendable func change(_ n: Int) async throws -> UUID {
                        let event = envelope("thing.created", data: .object(["n": .number(Double(n))]))
                        try await client.withTransaction(logger: TestEnvironment.logger) { connection in
                            try await connection.query("INSERT INTO outage.things VALUES (\(UUID()))", logger: TestEnvironment.logger)
                            try await outbox.enqueue(event, stream: stream, on: connection, logger: TestEnvironment.logger)
                        }
                        outbox.committed()
                        return event.id
                    }
                    try await withService(relay) {
                        var ids: [UUID] = []
                        for n in 0..<5 { ids.append(try await change(n)) }
                        let check = RedisClient(endpoint: server.endpoint, size: 1, commandTimeout: .seconds(1))
                        #expect(try await eventually { (try? await check.send(["XLEN", stream]))?.int == 5 })

                        await server.stop()
                        for n in 5..<10 { ids.append(try await change(n)) }  // state changes go on while Redis is down
                        try await Task.sleep(for: .milliseconds(300))
                        try await server.start()  // a new, empty Redis: only the outbox can bring those events back

                        #expect(try await eventually(timeout: .seconds(15)) { (try? await check.send(["XLEN", stream]))?.int == 5 })
                        let entries = try await check.send(["XRANGE", stream, "-", "+"])
                        let delivered = (entries.array ?? []).compactMap { $0.array?[1].array?[1].string }.compactMap { try? EventEnvelope.decode($0).id }
                        #expect(delivered == Array(ids[5..<10]))
                        await check.shutdown()
                    }
                    // Published rows leave the outbox right after their XADD, in the relay's next statement.
                    let emptied = try await eventually(timeout: .seconds(15)) {
                        var left = -1
                        for try await n in try await client.query("SELECT count(*) FROM outage.outbox", logger: TestEnvironment.logger).decode(Int.self) { left = n }
                        return left == 0
                    }
                    #expect(emptied, "the outbox still holds published events")
                }
            }
        } catch {
            await redis.shutdown()
            await server.stop()
            throw error
        }
        await redis.shutdown()
        await server.stop()
    }
}

extension OutboxTests {
    /// A batch waiting for an answer that never comes — its connection's packets stopped (a partition), or its
    /// connection died as its `COMMIT` was sent, which postgres-nio 1.33 leaves unanswered — is abandoned after
    /// `batchTimeout`: the relay goes on with a new connection, and stopping it does not wait for the lost batch.
    @Test("a batch that never gets an answer is abandoned after its time: the relay goes on over a new connection, and stops on time")
    func silentConnection() async throws {
        let proxy = try DatabaseProxy(upstream: TestEnvironment.postgresAdminURL)
        try await proxy.start()
        let streams = StreamNames(prefix: TestEnvironment.uniquePrefix())
        let stream = streams.events("silent")
        let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
        try await TestEnvironment.withDatabase { url in
            try await TestEnvironment.withPostgres(url) { direct in
                try await Migrator.migrate(schema: "silent", migrations: EventMigrations.all, client: direct, logger: TestEnvironment.logger)
                let outbox = Outbox(schema: "silent", streams: streams, producer: "tests")
                try await TestEnvironment.withPostgres(proxy.url(for: url)) { proxied in
                    let relay = OutboxRelay(outbox: outbox, client: proxied, publisher: EventPublisher(redis: redis), logger: TestEnvironment.logger,
                                            pollInterval: .milliseconds(50), batchTimeout: .seconds(2), shutdownGrace: .seconds(1))
                    let stopping = try await withService(relay) {
                        // The relay's pool holds a connection (it polls every 50 ms); from now on it never answers.
                        try await Task.sleep(for: .milliseconds(300))
                        proxy.silence()
                        let event = envelope("thing.happened")
                        try await direct.withTransaction(logger: TestEnvironment.logger) { connection in
                            try await outbox.enqueue(event, stream: stream, on: connection, logger: TestEnvironment.logger)
                        }
                        try await Task.sleep(for: .milliseconds(500))
                        try await proxy.restore()
                        let delivered = try await eventually(timeout: .seconds(30)) { (try? await redis.send(["XLEN", stream]))?.int == 1 }
                        #expect(delivered, "the relay never got past the batch on the silent connection")
                        return ContinuousClock.now
                    }
                    #expect(ContinuousClock.now - stopping < .seconds(10), "stopping waited for a batch that cannot end")
                }
            }
        }
        await redis.shutdown()
        await proxy.stop()
    }
}

@Suite("Migrations")
struct MigrationTests {
    @Test("two instances migrating at once apply each migration exactly once")
    func concurrentMigrations() async throws {
        try await TestEnvironment.withDatabase { url in
            try await TestEnvironment.withPostgres(url) { client in
                let migrations = [
                    Migration(id: "0001_a", sql: "CREATE TABLE {{schema}}.a (id int); INSERT INTO {{schema}}.a VALUES (1);"),
                    Migration(id: "0002_b", sql: """
                        CREATE FUNCTION {{schema}}.f() RETURNS int AS $$ BEGIN RETURN 1; END; $$ LANGUAGE plpgsql;
                        INSERT INTO {{schema}}.a VALUES ({{schema}}.f() + 1);
                        """),
                ]
                let applied = try await withThrowingTaskGroup(of: [String].self) { group in
                    for _ in 0..<4 {
                        group.addTask { try await Migrator.migrate(schema: "mig", migrations: migrations, client: client, logger: TestEnvironment.logger) }
                    }
                    var all: [String] = []
                    for try await ids in group { all += ids }
                    return all
                }
                #expect(applied.sorted() == ["0001_a", "0002_b"])
                let rows = try await client.query("SELECT count(*) FROM mig.a", logger: TestEnvironment.logger)
                for try await n in rows.decode(Int.self) { #expect(n == 2) }
                // A later start applies nothing.
                #expect(try await Migrator.migrate(schema: "mig", migrations: migrations, client: client, logger: TestEnvironment.logger).isEmpty)
            }
        }
    }

    @Test("a failing migration leaves nothing half-applied")
    func failingMigrationRollsBack() async throws {
        try await TestEnvironment.withDatabase { url in
            try await TestEnvironment.withPostgres(url) { client in
                let bad = [Migration(id: "0001", sql: "CREATE TABLE {{schema}}.ok (id int); CREATE TABLE broken (")]
                await #expect(throws: (any Error).self) {
                    try await Migrator.migrate(schema: "fail", migrations: bad, client: client, logger: TestEnvironment.logger)
                }
                let rows = try await client.query("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'fail'", logger: TestEnvironment.logger)
                for try await n in rows.decode(Int.self) { #expect(n == 0) }
            }
        }
    }
}
