import Foundation
@testable import GatewayService
import LanternCore
import LanternRedis
import LanternTestSupport
import Logging
import Testing

/// `RateCounters` against a real Redis: two instances stand for two gateways sharing one prefix.
@Suite("rate counters")
struct RateCountersTests {
    static func allowed(_ decision: RateLimiter.Decision) -> Bool {
        if case .allowed = decision { return true }
        return false
    }

    @Test("gateways share counts through Redis at each sync; a gateway overshoots by at most what it let through since")
    func sharedThroughRedis() async throws {
        let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
        let prefix = TestEnvironment.uniquePrefix()
        // 00:00:30 of a window: 30 s left in it.
        let time = ManualTime(Date(timeIntervalSince1970: 1_800_000_030))
        let a = RateCounters(redis: redis, prefix: prefix, clock: .manual(time), logger: TestEnvironment.logger)
        let b = RateCounters(redis: redis, prefix: prefix, clock: .manual(time), logger: TestEnvironment.logger)

        #expect((0..<3).allSatisfy { _ in Self.allowed(a.check(scope: "user", key: "u1", limit: 5)) })
        await a.sync()
        let key = a.redisKey("user:u1", window: 1_800_000_030 / 60)
        #expect(try await redis.send(["GET", key]).string == "3")
        let ttl = try await redis.send(["PTTL", key]).int ?? 0
        #expect(ttl > 60_000 && ttl <= 120_000)

        #expect(Self.allowed(b.check(scope: "user", key: "u1", limit: 5)))
        await b.sync()  // b now knows a's 3: 4 in all
        #expect(Self.allowed(b.check(scope: "user", key: "u1", limit: 5)))
        #expect(b.check(scope: "user", key: "u1", limit: 5) == .limited(retryAfterSeconds: 30))
        // a has not synced since: it still sees its own 3 and lets one more through (the bounded overshoot)…
        #expect(Self.allowed(a.check(scope: "user", key: "u1", limit: 5)))
        await a.sync()
        await b.sync()
        #expect(try await redis.send(["GET", key]).string == "6")
        // …and none after its next sync.
        #expect(!Self.allowed(a.check(scope: "user", key: "u1", limit: 5)))
        #expect(Self.allowed(a.check(scope: "user", key: "u2", limit: 5)), "other keys have their own count")

        time.advance(by: 30)  // the next window
        #expect(a.check(scope: "user", key: "u1", limit: 5) == .allowed(remaining: 4))
        await redis.shutdown()
    }

    @Test("with Redis unreachable a gateway goes on counting alone; a failed sync loses no count")
    func redisDown() async throws {
        let down = RedisClient(endpoint: RedisEndpoint(host: "127.0.0.1", port: 9), size: 1,
                               commandTimeout: .milliseconds(200), connectTimeout: .milliseconds(200))
        let time = ManualTime(Date(timeIntervalSince1970: 1_800_000_000))
        let counters = RateCounters(redis: down, prefix: TestEnvironment.uniquePrefix(), clock: .manual(time), logger: TestEnvironment.logger)
        #expect((0..<3).allSatisfy { _ in Self.allowed(counters.check(scope: "ip", key: "10.0.0.1", limit: 3)) })
        await counters.sync()
        #expect(!Self.allowed(counters.check(scope: "ip", key: "10.0.0.1", limit: 3)), "the count survives a failed sync")
        await down.shutdown()
    }
}
