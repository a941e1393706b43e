import Crypto
import Foundation
import LanternCore
import Logging

/// Fixed-window counters in Redis, shared by every replica, for limits where each use must be counted everywhere
/// at once: the gateway's low limits (sign-in, invite codes) and the cost limits of the services (renders per
/// account and minute, model calls per account and day). The gateway's per-user limit of all other routes is
/// counted in memory (`RateCounters`).
///
/// One round trip per use (a Lua script: INCR, set the window's expiry on first use, read the TTL).
/// When Redis is unreachable the use is allowed and logged: losing a limit for a moment is better than refusing
/// every user.
public struct RateLimiter: Sendable {
    public enum Decision: Sendable, Equatable {
        case allowed(remaining: Int)
        case limited(retryAfterSeconds: Int)
    }

    static let script = """
        local n = redis.call('INCR', KEYS[1])
        if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
        local ttl = redis.call('PTTL', KEYS[1])
        if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
        return {n, ttl}
        """

    let redis: RedisClient
    let prefix: String
    let logger: Logger
    let scriptSHA: String

    public init(redis: RedisClient, prefix: String, logger: Logger) {
        self.redis = redis
        self.prefix = prefix
        self.logger = logger
        self.scriptSHA = Self.sha1Hex(Self.script)
    }

    /// Counts one use for `key` against `limit` per `window` (the window starts at the key's first use). The key is
    /// `<prefix>:ratelimit:<scope>:<key>`.
    public func check(scope: String, key: String, limit: Int, window: Duration = .seconds(60)) async -> Decision {
        let redisKey = "\(prefix):ratelimit:\(scope):\(key)"
        let windowMillis = String(window.milliseconds)
        do {
            // The client's own connect and read timeouts bound the wait (see `buildGatewayApplication`).
            let reply: RedisValue
            do {
                reply = try await redis.send(["EVALSHA", scriptSHA, "1", redisKey, windowMillis])
            } catch RedisError.server(let message) where message.hasPrefix("NOSCRIPT") {
                reply = try await redis.send(["EVAL", Self.script, "1", redisKey, windowMillis])
            }
            guard let values = reply.array, values.count == 2, let count = values[0].int, let ttl = values[1].int else {
                throw RedisError.unexpectedReply("\(reply)")
            }
            if count > limit {
                return .limited(retryAfterSeconds: max(1, (ttl + 999) / 1000))
            }
            return .allowed(remaining: limit - count)
        } catch {
            logger.warning("rate limiter unavailable; allowing", metadata: ["scope": "\(scope)", "error": "\(error)"])
            return .allowed(remaining: limit)
        }
    }

    /// SHA-1 of the script, which is how Redis names it for EVALSHA.
    static func sha1Hex(_ text: String) -> String {
        Insecure.SHA1.hash(data: Array(text.utf8)).hexEncoded
    }
}
