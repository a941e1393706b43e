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
        /// Sign-in: rate-limited per client address with the stricter sign-in limit.
        public var limitByAddress: Bool
    }

    public var entries: [Entry]

    public static let lantern = RouteTable(entries: [
        Entry(prefix: "/v1/auth/device", service: "identity", isPublic: true, limitByAddress: true),
        Entry(prefix: "/v1/auth/google", service: "identity", isPublic: true, limitByAddress: true),
        Entry(prefix: "/v1/auth/apple", service: "identity", isPublic: true, limitByAddress: true),
        Entry(prefix: "/v1/auth/refresh", service: "identity", isPublic: true, limitByAddress: false),
        Entry(prefix: "/v1/auth", service: "identity", isPublic: false, limitByAddress: false),
        Entry(prefix: "/.well-known/jwks.json", service: "identity", isPublic: true, limitByAddress: false),
        Entry(prefix: "/v1/me", service: "identity", isPublic: false, limitByAddress: false),
        Entry(prefix: "/v1/pairing", service: "identity", isPublic: false, limitByAddress: false),
        Entry(prefix: "/v1/moments", service: "media", isPublic: false, limitByAddress: false),
        Entry(prefix: "/v1/widgets/pairly", service: "media", isPublic: false, limitByAddress: false),
        Entry(prefix: "/v1/astrology", service: "astrology", isPublic: false, limitByAddress: false),
        Entry(prefix: "/v1/fortunes", service: "content", isPublic: false, limitByAddress: false),
        Entry(prefix: "/v1/reports", service: "content", isPublic: false, limitByAddress: false),
        Entry(prefix: "/v1/roasts", service: "content", isPublic: false, limitByAddress: false),
        Entry(prefix: "/v1/widgets/luckyday", service: "content", isPublic: false, limitByAddress: false),
        Entry(prefix: "/v1/widgets/roastmelater", service: "content", isPublic: false, limitByAddress: false),
        Entry(prefix: "/v1/gamification", service: "gamification", isPublic: false, limitByAddress: false),
        Entry(prefix: "/v1/symbi", service: "health-brain", isPublic: false, limitByAddress: false),
    ])

    public func match(_ path: String) -> Entry? {
        entries.first { entry in
            path == entry.prefix || (path.hasPrefix(entry.prefix) && path.dropFirst(entry.prefix.count).first == "/")
        }
    }
}
