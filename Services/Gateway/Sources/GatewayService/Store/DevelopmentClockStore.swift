import LanternCore
import LanternRedis

/// The development stack's shared clock offset in Redis (`StreamNames.developmentClockOffset`, milliseconds), which
/// every process of the stack follows (`ServiceBuilder.addRedis`).
struct DevelopmentClockStore: Sendable {
    let redis: RedisClient
    let key: String

    /// The offset now, in milliseconds (0 when never moved).
    func offset() async throws -> Int64 {
        try await redis.send("GET", key).string.flatMap(Int64.init) ?? 0
    }

    /// Moves the offset forward by `milliseconds` (INCRBY: two requests at once both count); returns the new one.
    func advance(by milliseconds: Int64) async throws -> Int64 {
        guard let value = try await redis.send("INCRBY", key, String(milliseconds)).int else {
            throw RedisError.unexpectedReply("INCRBY \(key)")
        }
        return Int64(value)
    }
}
