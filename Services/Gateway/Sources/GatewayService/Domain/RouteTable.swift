/// Which service answers which public path (the table of docs/architecture.md).
///
/// Matching is by path prefix on segment boundaries: `/v1/me` matches `/v1/me` and `/v1/me/devices/x`, not
/// `/v1/meow`. The first matching entry wins, so more specific entries come first.
public struct RouteTable: Sendable {
    public struct Entry: Sendable, Equatable {
        public var prefix: String
        public var service: String
        /// Reachable without an access token.
        public var isPublic: Bool
        public var limit: Limit
    }

    /// Which rate-limit buckets a request counts against.
    public enum Limit: Sendable, Equatable {
        /// Per user (or per client address when anonymous), `RATE_LIMIT_USER_PER_MINUTE`.
        case standard
        /// Sign-in: per client address, `RATE_LIMIT_SIGNIN_PER_MINUTE` (credential guessing).
        case signIn
        /// Guessing a short code: per user *and* per client address, `RATE_LIMIT_CODE_GUESS_PER_MINUTE`.
        case codeGuess
    }

    public var entries: [Entry]
    /// Who answers each key of an app's first real-time frame (`RealtimeState`): app → [(key, service)]. An app
    /// missing here gets an empty state.
    public var realtimeState: [String: [(key: String, service: String)]] = [:]

    public static let lantern = RouteTable(entries: [
        Entry(prefix: "/v1/auth/device", service: "identity", isPublic: true, limit: .signIn),
        Entry(prefix: "/v1/auth/google", service: "identity", isPublic: true, limit: .signIn),
        Entry(prefix: "/v1/auth/apple", service: "identity", isPublic: true, limit: .signIn),
        Entry(prefix: "/v1/auth/refresh", service: "identity", isPublic: true, limit: .standard),
        Entry(prefix: "/v1/auth", service: "identity", isPublic: false, limit: .standard),
        Entry(prefix: "/.well-known/jwks.json", service: "identity", isPublic: true, limit: .standard),
        Entry(prefix: "/v1/me", service: "identity", isPublic: false, limit: .standard),
        Entry(prefix: "/v1/pairing/join", service: "identity", isPublic: false, limit: .codeGuess),
        Entry(prefix: "/v1/pairing", service: "identity", isPublic: false, limit: .standard),
        Entry(prefix: "/v1/moments", service: "media", isPublic: false, limit: .standard),
        Entry(prefix: "/v1/widgets/pairly", service: "media", isPublic: false, limit: .standard),
        Entry(prefix: "/v1/astrology", service: "astrology", isPublic: false, limit: .standard),
        Entry(prefix: "/v1/fortunes", service: "content", isPublic: false, limit: .standard),
        Entry(prefix: "/v1/reports", service: "content", isPublic: false, limit: .standard),
        Entry(prefix: "/v1/roasts", service: "content", isPublic: false, limit: .standard),
        Entry(prefix: "/v1/widgets/luckyday", service: "content", isPublic: false, limit: .standard),
        Entry(prefix: "/v1/widgets/roastmelater", service: "content", isPublic: false, limit: .standard),
        Entry(prefix: "/v1/gamification", service: "gamification", isPublic: false, limit: .standard),
        Entry(prefix: "/v1/symbi", service: "health-brain", isPublic: false, limit: .standard),
    ], realtimeState: [
        // Pairly: the partnership (identity) and the widget's moment (media).
        "pairly": [("pairing", "identity"), ("moment", "media")],
    ])

    public func match(_ path: String) -> Entry? {
        entries.first { entry in
            path == entry.prefix || (path.hasPrefix(entry.prefix) && path.dropFirst(entry.prefix.count).first == "/")
        }
    }
}
