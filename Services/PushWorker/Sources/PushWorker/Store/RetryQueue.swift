import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import LanternRedis

/// Deliveries waiting for another attempt (after a 429, a 5xx or a network error): a Redis sorted set
/// `<prefix>.push.retries` scored by due time in milliseconds, shared by every worker instance.
///
/// Claiming moves an item's score a lease into the future in the same script that reads it, so two instances
/// never take the same item, and an item whose worker crashed comes due again when the lease ends. The job that
/// produced it was acknowledged once the retry was stored, so nothing is lost and the stream is not held up.
public struct RetryQueue: Sendable {
    public struct Item: Codable, Sendable, Equatable {
        /// Unique per scheduled attempt (the set's member must differ when the same delivery is rescheduled).
        public var id: UUID
        public var jobId: UUID
        public var request: PushRequest
        public var deviceId: String
        /// The attempt this item will make (2 for the first retry).
        public var attempt: Int
        /// Why the previous attempt failed.
        public var reason: String
    }

    let redis: RedisClient
    public let key: String

    public init(redis: RedisClient, streams: StreamNames) {
        self.redis = redis
        self.key = "\(streams.prefix).push.retries"
    }

    public func schedule(_ item: Item, at due: Date) async throws {
        let member = String(decoding: try JSONEncoder.lantern.encode(item), as: UTF8.self)
        try await redis.send(["ZADD", key, String(Int64(due.timeIntervalSince1970 * 1000)), member])
    }

    /// Takes up to `limit` items due at `now`, leasing them for `lease`.
    public func claimDue(now: Date, lease: Duration, limit: Int) async throws -> [(member: String, item: Item)] {
        let nowMillis = Int64(now.timeIntervalSince1970 * 1000)
        let reply = try await redis.send(["EVAL", Self.claimScript, "1", key, String(nowMillis),
                                          String(nowMillis + lease.milliseconds), String(limit)])
        return (reply.array ?? []).compactMap { value in
            guard let member = value.string, let item = try? JSONDecoder.lantern.decode(Item.self, from: Data(member.utf8)) else { return nil }
            return (member, item)
        }
    }

    /// Removes a claimed item once its attempt is over (delivered, rescheduled as a new item, or dead-lettered).
    public func complete(_ member: String) async throws {
        try await redis.send(["ZREM", key, member])
    }

    public func count() async throws -> Int {
        try await redis.send(["ZCARD", key]).int ?? 0
    }

    static let claimScript = """
        local items = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
        for _, member in ipairs(items) do redis.call('ZADD', KEYS[1], 'XX', ARGV[2], member) end
        return items
        """
}
