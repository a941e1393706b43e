import Foundation
import LanternCore
import LanternRedis
import Logging
import ServiceLifecycle
import Synchronization

/// The per-user (and per-address) request counts of every route: decided in memory, shared through Redis in
/// batches.
///
/// Each request is counted in this process at once; every `syncInterval` the increments since the last sync go
/// to Redis in one pipeline (`INCRBY` and `PEXPIRE` per key) and the totals that come back include what the other
/// gateways counted. A request then costs a lock and a dictionary lookup instead of a Redis round trip, which
/// was a third of the gateway's CPU per request (docs/benchmarks.md). Windows are fixed 60-second slices of
/// the wall clock, the same in every gateway. Across N gateways a key can go over its limit by what the others
/// let through within one interval; the low limits where that matters (sign-in, invite codes) are checked in
/// Redis on every request (`RateLimiter`). If Redis is unreachable, counting goes on in each gateway alone.
public final class RateCounters: Service, Sendable {
    struct Counter {
        var window: Int64
        /// The total in Redis at the last sync (this gateway's increments included).
        var shared: Int
        /// Counted here, being added to Redis by the sync in progress.
        var syncing: Int
        /// Counted here since the last sync started.
        var pending: Int
        var total: Int { shared + syncing + pending }
    }

    private let counters = Mutex<[String: Counter]>([:])
    private let redis: RedisClient
    private let prefix: String
    private let clock: WallClock
    private let window: Int64
    private let syncInterval: Duration
    private let logger: Logger

    public init(redis: RedisClient, prefix: String, clock: WallClock = .system, windowSeconds: Int64 = 60,
                syncInterval: Duration = .milliseconds(100), logger: Logger) {
        self.redis = redis
        self.prefix = prefix
        self.clock = clock
        self.window = windowSeconds
        self.syncInterval = syncInterval
        self.logger = logger
    }

    /// Counts one request for `key` in `scope` against `limit` per window.
    public func check(scope: String, key: String, limit: Int) -> RateLimiter.Decision {
        let seconds = clock.now().timeIntervalSince1970
        let current = Int64(seconds) / window
        return counters.withLock { counters in
            let name = scope + ":" + key
            var counter = counters[name] ?? Counter(window: current, shared: 0, syncing: 0, pending: 0)
            if counter.window != current { counter = Counter(window: current, shared: 0, syncing: 0, pending: 0) }
            if counter.total >= limit {
                counters[name] = counter
                let left = Double((current + 1) * window) - seconds
                return .limited(retryAfterSeconds: max(1, Int(left.rounded(.up))))
            }
            counter.pending += 1
            counters[name] = counter
            return .allowed(remaining: limit - counter.total)
        }
    }

    /// The Redis key of a counter: `<prefix>:ratelimit:<scope>:<key>:<window number>`.
    func redisKey(_ name: String, window: Int64) -> String { "\(prefix):ratelimit:\(name):\(window)" }

    /// Adds what was counted here since the last sync to Redis and reads the shared totals back.
    public func sync() async {
        let current = Int64(clock.now().timeIntervalSince1970) / window
        let batch: [(name: String, window: Int64, count: Int)] = counters.withLock { counters in
            var batch: [(String, Int64, Int)] = []
            for (name, var counter) in counters {
                if counter.window < current && counter.pending == 0 && counter.syncing == 0 {
                    counters[name] = nil  // a finished window: nothing left to tell Redis
                } else if counter.pending > 0 {
                    batch.append((name, counter.window, counter.pending))
                    counter.syncing = counter.pending
                    counter.pending = 0
                    counters[name] = counter
                }
            }
            return batch
        }
        guard !batch.isEmpty else { return }
        let expiry = String(window * 2 * 1000)  // past the window's end, for clocks that differ a little
        var commands: [[String]] = []
        commands.reserveCapacity(batch.count * 2)
        for item in batch {
            let key = redisKey(item.name, window: item.window)
            commands.append(["INCRBY", key, String(item.count)])
            commands.append(["PEXPIRE", key, expiry])
        }
        let replies: [Result<RedisValue, RedisError>]
        do {
            replies = try await redis.pipeline(commands)
        } catch {
            replies = []
            logger.warning("rate-limit sync failed; counting in this gateway only until Redis answers", metadata: ["error": "\(error)"])
        }
        counters.withLock { counters in
            for (offset, item) in batch.enumerated() {
                guard var counter = counters[item.name], counter.window == item.window else { continue }
                if offset * 2 < replies.count, case .success(let value) = replies[offset * 2], let total = value.int {
                    counter.shared = total
                } else {
                    counter.pending += counter.syncing  // try again at the next sync
                }
                counter.syncing = 0
                counters[item.name] = counter
            }
        }
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await Task.sleep(for: syncInterval)
            await sync()
        }
        await sync()  // what was counted since the last sync
    }
}
