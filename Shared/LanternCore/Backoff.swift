/// Exponential backoff for a loop that retries until it works (a consumer, the outbox relay, the real-time feed):
/// 100 ms, doubling up to 5 s, back to the start after a success.
public struct Backoff: Sendable {
    public let initial: Duration
    public let maximum: Duration
    private var current: Duration

    public init(initial: Duration = .milliseconds(100), maximum: Duration = .seconds(5)) {
        self.initial = initial
        self.maximum = maximum
        self.current = initial
    }

    /// The wait before the next try; each call doubles the following one, up to `maximum`.
    public mutating func next() -> Duration {
        defer { current = min(current * 2, maximum) }
        return current
    }

    /// The last try worked.
    public mutating func reset() { current = initial }
}
