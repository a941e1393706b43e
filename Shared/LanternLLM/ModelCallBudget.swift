import Foundation
import LanternCore
import LanternRedis
import Logging

/// How many model calls one account may cause in a day (`LLM_CALLS_PER_ACCOUNT_PER_DAY`), counted in Redis so that
/// every replica of every service shares the count.
///
/// A model call costs money and one of the provider's few concurrent slots; device accounts are free, so without a
/// budget one script could spend both. A request over budget is not refused: the router skips its model steps and
/// the local generator answers, marked as written locally like any other fallback. Only requests that name their
/// `account` count (texts an account asks for: fortunes, profiles, roasts, the pet's brain); paid texts (a
/// purchased report) name none. One request counts once, however many models and retries it goes through; a cached
/// answer counts nothing. Days are UTC days of the service's clock, so time travel in development starts a new one.
///
/// Image calls (an evolution drawn by the image model) have a budget of their own, per account and 30 days
/// (`image(callsPerPeriod:…)`): they cost far more than a text, and a drawing that fails is retried.
public struct ModelCallBudget: Sendable {
    /// Calls per account and period (a UTC day for texts); nil for no limit.
    public let callsPerDay: Int?
    let limiter: RateLimiter?
    let clock: WallClock
    /// What is counted (`llm-calls`, `image-calls`): the Redis key `<prefix>:ratelimit:<scope>:<account>:<period>`.
    let scope: String
    /// The period's length in seconds (periods start at multiples of it since 1970).
    let period: Int

    /// No limit (tests, and a router without Redis).
    public static let unlimited = ModelCallBudget(callsPerDay: nil, limiter: nil, clock: .system)

    init(callsPerDay: Int?, limiter: RateLimiter?, clock: WallClock, scope: String = "llm-calls", period: Int = 86_400) {
        self.callsPerDay = callsPerDay
        self.limiter = limiter
        self.clock = clock
        self.scope = scope
        self.period = period
    }

    /// Image-model calls: `callsPerPeriod` per account and 30 days (0: no limit).
    public static func image(callsPerPeriod: Int, redis: RedisClient, prefix: String, clock: WallClock, logger: Logger) -> ModelCallBudget {
        ModelCallBudget(callsPerDay: callsPerPeriod > 0 ? callsPerPeriod : nil, limiter: RateLimiter(redis: redis, prefix: prefix, logger: logger),
                        clock: clock, scope: "image-calls", period: 30 * 86_400)
    }

    /// - Parameters:
    ///   - callsPerDay: the limit; 0 means none.
    ///   - prefix: the deployment's key prefix (`STREAM_PREFIX`).
    public init(callsPerDay: Int, redis: RedisClient, prefix: String, clock: WallClock, logger: Logger) {
        self.init(callsPerDay: callsPerDay > 0 ? callsPerDay : nil, limiter: RateLimiter(redis: redis, prefix: prefix, logger: logger),
                  clock: clock)
    }

    /// Counts one model call for `account` in the current period: false when its calls are spent. Redis unreachable
    /// allows it.
    public func spend(account: String) async -> Bool {
        guard let callsPerDay, let limiter else { return true }
        let index = Int(clock.now().timeIntervalSince1970.rounded(.down)) / period
        // Two periods of life: the key outlives its period whatever the first call's hour.
        let decision = await limiter.check(scope: scope, key: "\(account):\(index)", limit: callsPerDay, window: .seconds(2 * period))
        if case .limited = decision { return false }
        return true
    }
}
