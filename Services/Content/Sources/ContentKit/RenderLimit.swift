import Foundation
import LanternCore
import LanternRedis
import Logging

/// How many renders (a report's PDF, a roast's share card) one account may ask for in a minute
/// (`RENDERS_PER_ACCOUNT_PER_MINUTE`), counted in Redis so that every replica shares the count.
///
/// A render costs tens of milliseconds of CPU (a PDF also astrology's chart), a hundred times a plain read, so the
/// gateway's per-user request limit alone would let one account take a core. Past the limit: 429 `render_limited`
/// with `Retry-After`. A route checks it after its cheap checks (the token, the record, the body) and before the
/// render, so a refused request costs nothing and a malformed one is not counted.
public struct RenderLimit: Sendable {
    /// Renders per account and minute; nil for no limit.
    public let perMinute: Int?
    let limiter: RateLimiter?

    /// No limit (tests that build a platform by hand).
    public static let unlimited = RenderLimit(perMinute: nil, limiter: nil)

    init(perMinute: Int?, limiter: RateLimiter?) {
        self.perMinute = perMinute
        self.limiter = limiter
    }

    /// - Parameters:
    ///   - perMinute: the limit; 0 means none.
    ///   - prefix: the deployment's key prefix (`STREAM_PREFIX`).
    public init(perMinute: Int, redis: RedisClient, prefix: String, logger: Logger) {
        self.init(perMinute: perMinute > 0 ? perMinute : nil, limiter: RateLimiter(redis: redis, prefix: prefix, logger: logger))
    }

    /// Counts one render for `account`: nil when it may go ahead, else the seconds until it may. Redis unreachable
    /// admits it.
    public func admit(_ account: UUID) async -> Int? {
        guard let perMinute, let limiter else { return nil }
        if case .limited(let retryAfter) = await limiter.check(scope: "renders", key: account.uuidString.lowercased(), limit: perMinute) {
            return retryAfter
        }
        return nil
    }

    /// The answer to a render refused by `admit`.
    public func problem(retryAfter: Int) -> Problem {
        Problem(status: 429, code: "render_limited", title: "Too many renders",
                detail: "An account may render \(perMinute ?? 0) PDFs or share cards a minute; retry after \(retryAfter) s.", retryAfter: retryAfter)
    }
}
