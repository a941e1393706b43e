import Foundation
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
    let signal: OutboxSignal

    public init(schema: String, streams: StreamNames) {
        precondition(schema.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" })
        self.schema = schema
        self.streams = streams
        self.signal = OutboxSignal()
    }

    /// Adds an event to the outbox inside the caller's transaction. Call `committed()` after the commit.
    public func enqueue(_ envelope: EventEnvelope, stream: String, on connection: PostgresConnection, logger: Logger) async throws {
        let payload = try envelope.encoded()
        try await connection.query("""
            INSERT INTO \(unescaped: schema).outbox (stream, event_id, payload) VALUES (\(stream), \(envelope.id), \(payload))
            """, logger: logger)
    }

    /// Wakes the relay so an event leaves within milliseconds instead of at the next poll.
    public func committed() { signal.fire() }
}

/// A level-triggered wake-up between request handlers and the relay loop.
final class OutboxSignal: Sendable {
    private let state = Mutex<(pending: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func fire() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if let w = s.waiter { s.waiter = nil; return w }
            s.pending = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns when fired or after `timeout`, whichever is first.
    func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                    let resumeNow = self.state.withLock { s -> Bool in
                        if s.pending { s.pending = false; return true }
                        if let old = s.waiter { old.resume() }
                        s.waiter = c
                        return false
                    }
                    if resumeNow { c.resume() }
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            // Release whichever side is still waiting.
            self.fire()
            group.cancelAll()
            await group.waitForAll()
        }
    }
}

/// Publishes outbox rows to Redis and deletes them, in batches, in a loop.
///
/// Rows are locked with `FOR UPDATE SKIP LOCKED`, so several instances relay in parallel without publishing a row
/// twice in the normal case. If the commit fails after `XADD`, the row is published again: consumers are idempotent
/// by event id, which is what makes at-least-once delivery safe.
public struct OutboxRelay: Service {
    let outbox: Outbox
    let client: PostgresClient
    let publisher: EventPublisher
    let logger: Logger
    let pollInterval: Duration
    let batchSize: Int

    public init(outbox: Outbox, client: PostgresClient, publisher: EventPublisher, logger: Logger,
                pollInterval: Duration = .milliseconds(500), batchSize: Int = 200) {
        self.outbox = outbox
        self.client = client
        self.publisher = publisher
        self.logger = logger
        self.pollInterval = pollInterval
        self.batchSize = batchSize
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            var backoff = Duration.milliseconds(100)
            while !Task.isCancelled {
                do {
                    let published = try await relayBatch()
                    backoff = .milliseconds(100)
                    if published == batchSize { continue }  // more may be waiting
                    await outbox.signal.wait(timeout: pollInterval)
                } catch {
                    logger.warning("outbox relay paused", metadata: ["schema": "\(outbox.schema)", "error": "\(error)", "retryIn": "\(backoff)"])
                    try? await Task.sleep(for: backoff)
                    backoff = min(backoff * 2, .seconds(5))
                }
            }
        }
        // Give rows committed during shutdown one last chance.
        _ = try? await relayBatch()
    }

    /// Publishes up to `batchSize` rows; returns how many.
    @discardableResult
    public func relayBatch() async throws -> Int {
        try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query("""
                SELECT seq, stream, payload FROM \(unescaped: outbox.schema).outbox
                ORDER BY seq LIMIT \(batchSize) FOR UPDATE SKIP LOCKED
                """, logger: logger)
            var published: [Int64] = []
            for try await (seq, stream, payload) in rows.decode((Int64, String, String).self) {
                _ = try await publisher.publish(encoded: payload, to: stream)
                published.append(seq)
            }
            if !published.isEmpty {
                try await connection.query("DELETE FROM \(unescaped: outbox.schema).outbox WHERE seq = ANY(\(published))", logger: logger)
            }
            return published.count
        }
    }
}
