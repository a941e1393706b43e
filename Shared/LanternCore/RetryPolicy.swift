import Foundation

/// How often and when failed work is tried again: a push (`PUSH_MAX_ATTEMPTS`, `PUSH_RETRY_BASE_SECONDS`,
/// `PUSH_RETRY_MAX_SECONDS`), an evolution image (`EVOLUTION_MAX_ATTEMPTS`, `EVOLUTION_RETRY_BASE_SECONDS`,
/// `EVOLUTION_RETRY_MAX_SECONDS`).
public struct RetryPolicy: Sendable {
    public var maxAttempts: Int
    public var retryBase: Duration
    public var retryMax: Duration

    public init(maxAttempts: Int = 6, retryBase: Duration = .seconds(1), retryMax: Duration = .seconds(600)) {
        self.maxAttempts = maxAttempts
        self.retryBase = retryBase
        self.retryMax = retryMax
    }

    /// The wait after failed attempt `attempt`: "equal jitter", a random delay between half and all of an
    /// exponential ceiling (base × 2^(attempt-1), capped), so retries of many devices spread out but none comes
    /// back at once; never before the provider's own wait (`Retry-After`, `retryDelay`; at most an hour of it counts).
    public func delay(after attempt: Int, retryAfter: Duration?) -> Duration {
        let ceiling = min(retryMax.inSeconds, retryBase.inSeconds * pow(2, Double(attempt - 1)))
        let jittered = Double.random(in: ceiling / 2...max(ceiling / 2, ceiling))
        let floor = min(retryAfter?.inSeconds ?? 0, 3600)
        return .milliseconds(Int(max(jittered, floor) * 1000))
    }
}
