import Foundation
import LanternContracts
import LanternRedis

/// Appends envelopes to streams (`XADD … MAXLEN ~ n`).
///
/// Services do not call this for state changes (they write to the outbox, see `Outbox`); the relay does, and so do
/// producers of fire-and-forget jobs.
public struct EventPublisher: Sendable {
    public let redis: RedisClient
    /// Approximate cap per stream: old entries are trimmed in whole radix-tree nodes, which is cheap.
    public let maxLength: Int

    public init(redis: RedisClient, maxLength: Int = 100_000) {
        self.redis = redis
        self.maxLength = maxLength
    }

    /// Publishes one envelope and returns its stream entry id.
    @discardableResult
    public func publish(_ envelope: EventEnvelope, to stream: String) async throws -> String {
        try await publish(encoded: envelope.encoded(), to: stream)
    }

    /// Publishes many encoded envelopes in one round trip (the outbox relay's path). Throws on the first failure;
    /// entries before it may have been added, which at-least-once delivery allows.
    public func publish(batch: [(stream: String, encoded: String)]) async throws {
        let commands = batch.map { ["XADD", $0.stream, "MAXLEN", "~", String(maxLength), "*", "event", $0.encoded] }
        for result in try await redis.pipeline(commands) { _ = try result.get() }
    }

    @discardableResult
    public func publish(encoded: String, to stream: String) async throws -> String {
        let reply = try await redis.send(["XADD", stream, "MAXLEN", "~", String(maxLength), "*", "event", encoded])
        guard let id = reply.string else { throw RedisError.unexpectedReply("XADD returned \(reply)") }
        return id
    }
}
