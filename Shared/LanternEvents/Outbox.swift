import Foundation
import LanternContracts
import LanternCore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The transactional outbox of one service schema.
///
/// `enqueue` writes an event on the connection of the caller's transaction, so the event exists if and only if
/// the state change committed. `OutboxRelay` publishes the rows later; Redis being down only delays them.
public struct Outbox: Sendable {
    public let schema: String
    public let streams: StreamNames
    /// The envelopes' `producer`: the service's name.
    public let producer: String
    let signal: OutboxSignal

    public init(schema: String, streams: StreamNames, producer: String) {
        precondition(schema.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" })
        self.schema = schema
        self.streams = streams
        self.producer = producer
        self.signal = OutboxSignal()
    }

    /// Adds a typed payload to the outbox inside the caller's transaction, on the stream its contract names.
    public func enqueue<P: EventPayload>(_ payload: P, subject: String?, at date: Date, on connection: PostgresConnection, logger: Logger) async throws {
        try await insert(try prepare(payload, subject: subject, at: date), on: connection, logger: logger)
    }

    /// Queues push notifications in the caller's transaction, next to the state change they announce.
    public func enqueue(_ requests: [PushRequest], at date: Date, on connection: PostgresConnection, logger: Logger) async throws {
        for request in requests { try await enqueue(request, subject: request.userId, at: date, on: connection, logger: logger) }
    }

    /// Queues real-time frames in the caller's transaction: they reach the sockets only if the change committed.
    public func enqueue(_ frames: [RealtimeFrame], at date: Date, on connection: PostgresConnection, logger: Logger) async throws {
        for frame in frames {
            try await enqueue(frame, subject: frame.recipients.count == 1 ? frame.recipients[0] : nil, at: date, on: connection, logger: logger)
        }
    }

    /// Adds an event to the outbox inside the caller's transaction, carrying the current trace (`EventTrace`).
    /// Call `committed()` after the commit.
    public func enqueue(_ envelope: EventEnvelope, stream: String, on connection: PostgresConnection, logger: Logger) async throws {
        try await insert(try prepare(envelope, stream: stream), on: connection, logger: logger)
    }

    private func insert(_ row: Row, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("""
            INSERT INTO \(unescaped: schema).outbox (stream, event_id, payload) VALUES (\(row.stream), \(row.eventID), \(row.payload))
            """, logger: logger)
    }

    /// An outbox row, ready to insert (the trace of the current request included), for a write that changes its
    /// state and records the event in one statement: `WITH changed AS (INSERT … RETURNING …), event AS (INSERT INTO
    /// <schema>.outbox (stream, event_id, payload) SELECT …, …, … FROM changed) SELECT … FROM changed` commits both
    /// or neither in one round trip instead of a transaction's four. Call `committed()` after it.
    public struct Row: Sendable {
        public let stream: String
        public let eventID: UUID
        public let payload: String
    }

    public func prepare<P: EventPayload>(_ payload: P, subject: String?, at date: Date) throws -> Row {
        let id = UUID.v7()
        return Row(stream: streams.name(of: P.stream), eventID: id,
                   payload: try EventEnvelope.encoded(payload, id: id, producer: producer, subject: subject, occurredAt: date,
                                                      traceparent: EventTrace.currentTraceparent()))
    }

    public func prepare(_ envelope: EventEnvelope, stream: String) throws -> Row {
        var envelope = envelope
        if envelope.traceparent == nil { envelope.traceparent = EventTrace.currentTraceparent() }
        return Row(stream: stream, eventID: envelope.id, payload: try envelope.encoded())
    }

    /// `<schema>.outbox`, for statements that insert a prepared `Row` themselves.
    public var table: String { "\(schema).outbox" }

    /// Wakes the relay so an event leaves within milliseconds instead of at the next poll.
    public func committed() { signal.fire() }
}

/// Wake-ups for the relay: a commit in this process, or the poll timer. Coalesced (at most one pending).
final class OutboxSignal: Sendable {
    let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func fire() { continuation.yield() }
}

/// Publishes outbox rows to Redis and deletes them, in batches, in a loop.
///
/// Rows are locked with `FOR UPDATE SKIP LOCKED`, so several instances relay in parallel without publishing a row
/// twice in the normal case. If the commit fails after `XADD`, the row is published again: consumers are idempotent
/// by event id, which is what makes at-least-once delivery safe.
///
/// Every batch is bounded by `batchTimeout`, and stopping by `shutdownGrace`: a batch whose connection dies at the
/// wrong moment can wait for ever (postgres-nio 1.33 leaves a `COMMIT` sent as its connection closes unanswered), and
/// a connection whose packets stop arriving waits for TCP. Such a batch is abandoned (its rows stay in the outbox, and
/// its locks go with its connection), so one database blip cannot stop a process's events for good, nor keep the
/// process from stopping.
public struct OutboxRelay: Service {
    let outbox: Outbox
    let client: PostgresClient
    let publisher: EventPublisher
    let logger: Logger
    let pollInterval: Duration
    let batchSize: Int
    let gate: StartupGate?
    let batchTimeout: Duration
    let shutdownGrace: Duration
    /// After a batch of fewer than `batchSize` rows, how long to wait before the next: while commits keep coming, the
    /// next batch takes all that arrived meanwhile, and its three round trips to PostgreSQL and one to Redis are
    /// shared by more events (without it, each batch takes only the rows committed while the one before ran). The
    /// first row after a quiet spell leaves at once.
    let linger: Duration
    /// Where the loop is, for the warning when a batch is left behind at shutdown.
    private let step = RelayStep()

    /// - Parameter gate: when given, the relay starts once it opens (after the schema's migrations).
    public init(outbox: Outbox, client: PostgresClient, publisher: EventPublisher, logger: Logger,
                pollInterval: Duration = .milliseconds(500), batchSize: Int = 200, startAfter gate: StartupGate? = nil,
                batchTimeout: Duration = .seconds(30), shutdownGrace: Duration = .seconds(5), linger: Duration = .milliseconds(5)) {
        self.linger = linger
        self.gate = gate
        self.outbox = outbox
        self.client = client
        self.publisher = publisher
        self.logger = logger
        self.pollInterval = pollInterval
        self.batchSize = batchSize
        self.batchTimeout = batchTimeout
        self.shutdownGrace = shutdownGrace
    }

    public func run() async throws {
        if let gate {
            await cancelWhenGracefulShutdown { await gate.wait() }
            guard gate.isOpen else { return }  // shut down before start-up finished
        }
        let loop = Task { await relayLoop() }
        // Until the process stops (graceful shutdown returns; cancellation throws).
        try? await gracefulShutdown()
        loop.cancel()
        guard (try? await withDeadline(shutdownGrace) { await loop.value }) != nil else {
            logger.warning("outbox relay: a batch did not end when stopping; left behind", metadata: ["schema": "\(outbox.schema)", "step": "\(step.current)"])
            return
        }
        // Rows committed during shutdown get one last batch. On a graceful shutdown only: the database client stops
        // after this service then, but on cancellation it may be gone already.
        if !Task.isCancelled { _ = try? await withDeadline(shutdownGrace) { try await relayBatch() } }
    }

    /// Relays whenever the outbox is signalled (a commit in this process, or the poll timer), until cancelled.
    private func relayLoop() async {
        let signal = outbox.signal
        let pollInterval = self.pollInterval
        await withTaskGroup(of: Void.self) { group in
            // The timer catches rows committed by other instances (their signals do not reach us).
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: pollInterval)
                    signal.fire()
                }
            }
            var backoff = Backoff()
            for await _ in signal.stream {
                do {
                    // Drain: more may be waiting.
                    var relayed = batchSize
                    while relayed == batchSize { relayed = try await withDeadline(batchTimeout, { try await relayBatch() }) }
                    backoff.reset()
                    if relayed > 0, linger > .zero { try? await Task.sleep(for: linger) }
                } catch {
                    if Task.isCancelled { break }  // stopping, not paused
                    let wait = backoff.next()
                    logger.warning("outbox relay paused", metadata: ["schema": "\(outbox.schema)", "error": "\(error)", "step": "\(step.current)", "retryIn": "\(wait)"])
                    step.set("waiting to retry")
                    try? await Task.sleep(for: wait)
                }
                step.set("waiting")
            }
            group.cancelAll()
        }
    }

    /// Publishes up to `batchSize` rows; returns how many. The rows are taken (`DELETE … RETURNING`, skipping rows
    /// another relay holds; `= ANY(ARRAY(…))` keeps both scans on the primary key, where `IN (…)` is planned as a
    /// hash join over the whole table) and published inside one transaction: a publish that fails rolls the delete back, so
    /// nothing is lost, and a batch costs three round trips to PostgreSQL (`BEGIN`, the delete, `COMMIT`).
    @discardableResult
    public func relayBatch() async throws -> Int {
        step.set("starting a transaction")
        return try await client.transaction(logger: logger) { connection in
            step.set("taking rows from the outbox")
            let rows = try await connection.query("""
                DELETE FROM \(unescaped: outbox.schema).outbox WHERE seq = ANY(ARRAY(
                    SELECT seq FROM \(unescaped: outbox.schema).outbox ORDER BY seq LIMIT \(batchSize) FOR UPDATE SKIP LOCKED))
                RETURNING seq, stream, payload
                """, logger: logger)
            var taken: [(seq: Int64, stream: String, encoded: String)] = []
            for try await (seq, stream, payload) in rows.decode((Int64, String, String).self) { taken.append((seq, stream, payload)) }
            // RETURNING has no order: events leave in the order they were committed.
            taken.sort { $0.seq < $1.seq }
            step.set("publishing to Redis")
            try await publisher.publish(batch: taken.map { ($0.stream, $0.encoded) })
            step.set("committing")
            return taken.count
        }
    }
}

/// The relay loop's current step (a name), shared with the relay's `run`.
private final class RelayStep: Sendable {
    private let value = Mutex("waiting")
    func set(_ step: String) { value.withLock { $0 = step } }
    var current: String { value.withLock { $0 } }
}
