import Foundation
import LanternContracts
import LanternCore
import LanternRedis
import Logging
import Metrics
import ServiceLifecycle

/// Reads one stream as a member of a consumer group and hands each envelope to `handler`.
///
/// Delivery is at least once. A message is acknowledged only after `handler` returns; if the handler throws or the
/// process dies, the message stays pending and is taken over (`XAUTOCLAIM`) by any consumer of the group once it
/// has been idle for `claimIdle`. After `maxDeliveries` attempts, or at once when it cannot be decoded, it moves to
/// the dead-letter stream `lantern.dlq.<stream>` with the reason; a payload that does not decode into its contract
/// (`UndecodablePayload`) goes there at once. Handlers must be idempotent (`ProcessedEvents`).
///
/// With a `StartupGate` (the service's migrations) nothing is read before it opens, so a handler never meets a
/// schema that is not there yet.
public struct StreamConsumer: Service {
    public struct Options: Sendable {
        public var stream: String
        public var group: String
        public var consumer: String
        public var batchSize = 64
        public var block: Duration = .seconds(2)
        public var claimIdle: Duration = .seconds(30)
        public var maxDeliveries = 5
        /// How long one handler call (or one batch) may take before it is abandoned and its messages are left
        /// pending, to be retried after `claimIdle`: a call that never ends (a database connection that died as
        /// its `COMMIT` was sent, which postgres-nio 1.33 leaves unanswered) must not stop the consumer for good.
        public var handlerTimeout: Duration = .seconds(120)
        /// Where a new group starts: `0` replays what the stream still holds, `$` only new entries.
        public var startID = "0"
        /// After a read that took fewer than `batchSize` messages, how long to wait before the next: under a steady
        /// flow the next read then takes many at once, and a batch handler's round trips are per batch. The first
        /// message after a quiet spell is read at once. Zero reads again at once.
        public var linger: Duration = .zero

        public init(stream: String, group: String, consumer: String) {
            self.stream = stream
            self.group = group
            self.consumer = consumer
        }
    }

    public typealias Handler = @Sendable (EventEnvelope) async throws -> Void
    /// Handles a whole batch at once and says, per envelope, how it went (in order). For workers that save round
    /// trips by batching (one query, one pipeline for many messages).
    public typealias BatchHandler = @Sendable ([EventEnvelope]) async -> [BatchOutcome]

    /// What became of one message of a batch.
    public enum BatchOutcome: Sendable, Equatable {
        /// Handled: acknowledged.
        case done
        /// Failed for now: retried after `claimIdle`, dead-lettered after `maxDeliveries`.
        case retry
        /// Can never succeed (its payload breaks its contract): dead-lettered at once with this reason.
        case poison(String)
    }

    public let options: Options
    let redis: RedisClient
    let publisher: EventPublisher
    let streams: StreamNames
    let handler: Handler
    let batchHandler: BatchHandler?
    let gate: StartupGate?
    let logger: Logger

    /// - Parameters:
    ///   - endpoint: Redis; the consumer opens a connection of its own because `XREADGROUP BLOCK` holds it.
    ///   - gate: when given, reading starts once it opens (after the service's migrations).
    public init(endpoint: RedisEndpoint, streams: StreamNames, options: Options, logger: Logger, startAfter gate: StartupGate? = nil,
                handler: @escaping Handler) {
        self.init(endpoint: endpoint, streams: streams, options: options, logger: logger, gate: gate, handler: handler, batchHandler: nil)
    }

    /// A consumer of the event types `handlers` knows; entries of other types are acknowledged and skipped.
    public init(endpoint: RedisEndpoint, streams: StreamNames, options: Options, logger: Logger, startAfter gate: StartupGate? = nil,
                handlers: EventHandlers) {
        self.init(endpoint: endpoint, streams: streams, options: options, logger: logger, gate: gate,
                  handler: { envelope in try await handlers.handle(envelope) }, batchHandler: nil)
    }

    /// A consumer whose new messages are handled a batch at a time; reclaimed ones go through it one by one.
    public init(endpoint: RedisEndpoint, streams: StreamNames, options: Options, logger: Logger, startAfter gate: StartupGate? = nil,
                batchHandler: @escaping BatchHandler) {
        self.init(endpoint: endpoint, streams: streams, options: options, logger: logger, gate: gate, handler: { envelope in
            switch await batchHandler([envelope]).first {
            case .done?: return
            case .poison(let reason)?: throw UndecodablePayload(reason)
            case .retry?, nil: throw BatchEntryFailed()
            }
        }, batchHandler: batchHandler)
    }

    struct BatchEntryFailed: Error {}

    private init(endpoint: RedisEndpoint, streams: StreamNames, options: Options, logger: Logger, gate: StartupGate?,
                 handler: @escaping Handler, batchHandler: BatchHandler?) {
        self.gate = gate
        self.batchHandler = batchHandler
        self.options = options
        // Blocking reads must not time out the socket: read timeout = BLOCK + margin.
        self.redis = RedisClient(endpoint: endpoint, size: 1, commandTimeout: options.block + .seconds(5))
        self.publisher = EventPublisher(redis: redis)
        self.streams = streams
        self.handler = handler
        var logger = logger
        logger[metadataKey: "stream"] = "\(options.stream)"
        logger[metadataKey: "group"] = "\(options.group)"
        self.logger = logger
    }

    public func run() async throws {
        if let gate {
            await cancelWhenGracefulShutdown { await gate.wait() }
            guard gate.isOpen else { return await redis.shutdown() }  // shut down before start-up finished
        }
        var groupReady = false
        var lastReclaim = ContinuousClock.now - options.claimIdle
        var backoff = Backoff()
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                if !groupReady {
                    try await ensureGroup()
                    groupReady = true
                }
                if ContinuousClock.now - lastReclaim >= min(options.claimIdle, .seconds(5)) {
                    try await reclaim()
                    lastReclaim = .now
                }
                let read = try await readNew()
                backoff.reset()
                if options.linger > .zero, read > 0, read < options.batchSize { try? await Task.sleep(for: options.linger) }
            } catch RedisError.server(let message) where message.hasPrefix("NOGROUP") {
                // Redis lost the group (restart without persistence, stream deleted): recreate it.
                groupReady = false
            } catch {
                let wait = backoff.next()
                logger.warning("consumer paused", metadata: ["error": "\(error)", "retryIn": "\(wait)"])
                try? await Task.sleep(for: wait)
                groupReady = false
            }
        }
        await redis.shutdown()
    }

    func ensureGroup() async throws {
        do {
            try await redis.send(["XGROUP", "CREATE", options.stream, options.group, options.startID, "MKSTREAM"])
        } catch RedisError.server(let message) where message.hasPrefix("BUSYGROUP") {
            // Already there: the normal case.
        }
    }

    /// Reads and handles the group's new messages; returns how many were read.
    @discardableResult
    func readNew() async throws -> Int {
        let reply = try await redis.send([
            "XREADGROUP", "GROUP", options.group, options.consumer, "COUNT", String(options.batchSize),
            "BLOCK", String(max(1, options.block.milliseconds)), "STREAMS", options.stream, ">",
        ])
        let batch = StreamEntry.entries(ofXREAD: reply).map { ($0.id, $0.fields) }
        var handled: [String] = []
        if let batchHandler {
            handled = await processBatch(batch, batchHandler)
        } else {
            for (id, fields) in batch {
                if await process(id: id, fields: fields, deliveries: 1, acknowledge: false) { handled.append(id) }
            }
        }
        // One XACK per batch: a crash before it only means redelivery, which handlers tolerate.
        if !handled.isEmpty { try await redis.send(["XACK", options.stream, options.group] + handled) }
        return batch.count
    }

    /// Takes over messages idle longer than `claimIdle` (a crashed or stuck consumer's), then retries or
    /// dead-letters them by delivery count.
    func reclaim() async throws {
        let idleMillis = String(options.claimIdle.milliseconds)
        var start = "0-0"
        for _ in 0..<100 {  // bounded: at most 100 × batchSize messages per round
            let reply = try await redis.send([
                "XAUTOCLAIM", options.stream, options.group, options.consumer, idleMillis, start, "COUNT", String(options.batchSize),
            ])
            guard let parts = reply.array, parts.count >= 2, let next = parts[0].string, let entries = parts[1].array else {
                throw RedisError.unexpectedReply("XAUTOCLAIM: \(reply)")
            }
            let claimed = entries.compactMap(StreamEntry.init).map { ($0.id, $0.fields) }
            if !claimed.isEmpty {
                let counts = try await deliveryCounts(ids: claimed.map(\.0))
                for (id, fields) in claimed {
                    await process(id: id, fields: fields, deliveries: counts[id] ?? options.maxDeliveries + 1)
                }
            }
            if next == "0-0" { break }
            start = next
        }
    }

    private func deliveryCounts(ids: [String]) async throws -> [String: Int] {
        guard let first = ids.first, let last = ids.last else { return [:] }
        let reply = try await redis.send(["XPENDING", options.stream, options.group, first, last, String(ids.count * 2), options.consumer])
        var counts: [String: Int] = [:]
        for item in reply.array ?? [] {
            guard let fields = item.array, fields.count >= 4, let id = fields[0].string, let n = fields[3].int else { continue }
            counts[id] = n
        }
        return counts
    }

    /// Handles one entry; returns true when it succeeded and still needs its XACK (when `acknowledge` is false).
    @discardableResult
    func process(id: String, fields: [String: String], deliveries: Int, acknowledge: Bool = true) async -> Bool {
        let dimensions = [("stream", options.stream), ("group", options.group)]
        guard let raw = fields["event"], let envelope = try? EventEnvelope.decode(raw) else {
            await deadLetter(id: id, fields: fields, deliveries: deliveries, reason: "undecodable envelope")
            return false
        }
        if deliveries > options.maxDeliveries {
            await deadLetter(id: id, fields: fields, deliveries: deliveries, reason: "delivered \(deliveries) times without success")
            return false
        }
        do {
            try await withDeadline(options.handlerTimeout) { [handler, options] in
                try await EventTrace.handling(envelope, group: options.group) { try await handler(envelope) }
            }
            if acknowledge { try await redis.send(["XACK", options.stream, options.group, id]) }
            Counter(label: "lantern_events_handled_total", dimensions: dimensions + [("result", "ok")]).increment()
            return !acknowledge
        } catch let poison as UndecodablePayload {
            await deadLetter(id: id, fields: fields, deliveries: deliveries, reason: poison.description)
            return false
        } catch {
            // Left pending on purpose: it is retried after `claimIdle`.
            Counter(label: "lantern_events_handled_total", dimensions: dimensions + [("result", "error")]).increment()
            logger.error("event handler failed", metadata: ["entry": "\(id)", "eventId": "\(envelope.id.lowercased)", "type": "\(envelope.type)",
                                                          "deliveries": "\(deliveries)", "error": "\(error)"])
            return false
        }
    }

    /// First deliveries through the batch handler; returns the ids to acknowledge.
    private func processBatch(_ batch: [(String, [String: String])], _ batchHandler: @escaping BatchHandler) async -> [String] {
        var ids: [String] = []
        var envelopes: [EventEnvelope] = []
        for (id, fields) in batch {
            guard let raw = fields["event"], let envelope = try? EventEnvelope.decode(raw) else {
                await deadLetter(id: id, fields: fields, deliveries: 1, reason: "undecodable envelope")
                continue
            }
            ids.append(id)
            envelopes.append(envelope)
        }
        guard !envelopes.isEmpty else { return [] }
        let results: [BatchOutcome]
        do {
            results = try await withDeadline(options.handlerTimeout) { [envelopes] in await batchHandler(envelopes) }
        } catch {
            // Abandoned (or stopping): every message stays pending and is retried one by one after `claimIdle`.
            logger.error("batch handler did not finish; its messages will be retried", metadata: ["messages": "\(envelopes.count)", "error": "\(error)"])
            return []
        }
        var handled: [String] = []
        var poisoned = 0
        for (index, id) in ids.enumerated() {
            let outcome = index < results.count ? results[index] : .retry
            if case .poison(let reason) = outcome {
                await deadLetter(id: id, fields: batch.first { $0.0 == id }?.1 ?? [:], deliveries: 1, reason: reason)
                poisoned += 1
                continue
            }
            let ok = outcome == .done
            if ok { handled.append(id) }
            Counter(label: "lantern_events_handled_total", dimensions: [("stream", options.stream), ("group", options.group), ("result", ok ? "ok" : "error")]).increment()
        }
        if handled.count + poisoned < ids.count {
            let failed = ids.count - handled.count - poisoned
            logger.error("batch handler failed some messages; they will be retried", metadata: ["failed": "\(failed)"])
        }
        return handled
    }

    func deadLetter(id: String, fields: [String: String], deliveries: Int, reason: String) async {
        do {
            try await DeadLetters(redis: redis, streams: streams).add(event: fields["event"] ?? "", stream: options.stream, entry: id,
                                                                     group: options.group, deliveries: deliveries, reason: reason)
            try await redis.send(["XACK", options.stream, options.group, id])
            logger.error("message dead-lettered", metadata: ["entry": "\(id)", "dlq": "\(streams.deadLetter(of: options.stream))", "reason": "\(reason)"])
        } catch {
            logger.error("dead-lettering failed; will retry", metadata: ["entry": "\(id)", "error": "\(error)"])
        }
    }
}
