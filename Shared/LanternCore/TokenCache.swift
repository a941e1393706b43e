import Foundation

/// A bearer token reused until `margin` before it expires, fetched again after that or after `invalidate`;
/// concurrent callers share one fetch. Behind every token Lantern obtains for itself: service tokens from identity,
/// Google's OAuth access tokens for FCM.
public actor TokenCache {
    public typealias Fetch = @Sendable () async throws -> (token: String, expiresAt: Date)

    private let fetch: Fetch
    private let clock: WallClock
    private let margin: TimeInterval
    private var current: (token: String, expiresAt: Date)?
    private var pending: Task<(token: String, expiresAt: Date), any Error>?

    public init(clock: WallClock = .system, margin: TimeInterval = 60, fetch: @escaping Fetch) {
        self.fetch = fetch
        self.clock = clock
        self.margin = margin
    }

    /// A token valid for at least `margin` more.
    public func token() async throws -> String {
        if let current, current.expiresAt.timeIntervalSince(clock.now()) > margin { return current.token }
        if let pending { return try await pending.value.token }
        let task = Task { try await fetch() }
        pending = task
        defer { pending = nil }
        let fresh = try await task.value
        current = fresh
        return fresh.token
    }

    /// Forgets the token (a server answered 401 with it: the key may have rotated); with `token`, only if it is still
    /// the current one, so a caller late with its 401 does not throw away a token fetched since.
    public func invalidate(_ token: String? = nil) {
        if token == nil || current?.token == token { current = nil }
    }
}
