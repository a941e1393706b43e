import LanternContracts

/// Which service answers which public path (the table of docs/architecture.md).
///
/// Matching is by path prefix on segment boundaries, ignoring ASCII case: `/v1/me` matches `/v1/me`, `/V1/Me` and
/// `/v1/me/devices/x`, not `/v1/meow`. The first matching entry wins, so more specific entries come first.
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
        /// Device sign-in: as `signIn`, and per client address and day, `RATE_LIMIT_DEVICE_SIGNIN_PER_DAY`: a device
        /// account is free, and each brings its own budget of model calls (docs/deploy.md, "What one address can spend").
        case deviceSignIn
        /// Guessing a short code: per user *and* per client address, `RATE_LIMIT_CODE_GUESS_PER_MINUTE`.
        case codeGuess
    }

    public var entries: [Entry]
    /// Who answers each key of an app's first real-time frame (`RealtimeState`): app → [(key, service)]. An app
    /// missing here gets an empty state.
    public var realtimeState: [String: [(key: String, service: String)]] = [:]
    /// Apps with a real-time feed: only their users may open `/v1/realtime` or Socket.IO.
    public var realtimeApps: Set<String> = []

    public static let lantern = RouteTable(entries: [
        Entry(prefix: "/v1/auth/device", service: "identity", isPublic: true, limit: .deviceSignIn),
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
        // App Store Server Notifications V2: Apple's servers post without a token; the signature is checked by content.
        Entry(prefix: "/v1/appstore/notifications", service: "content", isPublic: true, limit: .standard),
        Entry(prefix: "/v1/roasts", service: "content", isPublic: false, limit: .standard),
        // RoastMeLater's operator API: its own keys, never an app's token (content checks them); per address, like
        // sign-in, so that keys cannot be guessed at the standard rate.
        Entry(prefix: "/v1/operator/roastmelater", service: "content", isPublic: true, limit: .signIn),
        Entry(prefix: "/v1/widgets/luckyday", service: "content", isPublic: false, limit: .standard),
        Entry(prefix: "/v1/widgets/roastmelater", service: "content", isPublic: false, limit: .standard),
        Entry(prefix: "/v1/gamification", service: "gamification", isPublic: false, limit: .standard),
        Entry(prefix: "/v1/symbi", service: "health-brain", isPublic: false, limit: .standard),
    ], realtimeState: [
        // Pairly: the partnership (identity) and the widget's moment (media).
        AppID.pairly.rawValue: RealtimeState.keys[.pairly, default: []].map { ($0.name, $0.service) },
    ], realtimeApps: ["pairly", "astrosvitla", "roastmelater", "symbi"])

    /// The entry for a canonical path (`CanonicalPath`). Prefixes match without regard to ASCII case, so
    /// `/v1/pairing/JOIN` is the invite-code route with its limits, whatever another router would make of it.
    public func match(_ path: String) -> Entry? {
        entries.first { entry in
            let prefix = entry.prefix.utf8, head = path.utf8.prefix(prefix.count)
            guard head.count == prefix.count, zip(head, prefix).allSatisfy({ Self.lower($0) == Self.lower($1) }) else { return false }
            return path.utf8.count == prefix.count || path.utf8.dropFirst(prefix.count).first == UInt8(ascii: "/")
        }
    }

    /// `path` as the service is sent it: the entry's own spelling of the prefix, then the rest as it came.
    public func forwardedPath(_ path: String, for entry: Entry) -> String {
        entry.prefix + String(decoding: path.utf8.dropFirst(entry.prefix.utf8.count), as: UTF8.self)
    }

    private static func lower(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
