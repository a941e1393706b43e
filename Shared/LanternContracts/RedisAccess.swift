/// What each process may do in Redis, as a Redis 7 ACL user of its own: the streams it appends to, the streams it
/// reads, the keys it keeps, and nothing else.
///
/// Every pod used to share one credential, so a compromised one could append `user.deleted` to identity's stream
/// or real-time frames for anyone (issue #23). Now a service signs in as itself (`REDIS_URL` with its user) and
/// Redis refuses the rest with `NOPERM`: only identity appends to `lantern.events.identity`; a consumer reads and
/// acknowledges its streams through its group and appends only to their dead-letter streams; the gateway reads
/// `lantern.realtime` and writes nothing but its counters. The rules are made from this table alone
/// (`rules(streams:)`, `aclFile(streams:)`): by the tests, which run every service as its user, and, through the
/// committed `infra/redis/users.acl`, by `scripts/redis-users.sh` for `make up`, compose and Kubernetes.
public struct RedisAccess: Sendable, Equatable {
    /// Keys of one kind and the commands run on them (a Lua script's own calls included).
    public struct Keys: Sendable, Equatable {
        /// After the deployment's prefix: `:ratelimit:renders:*` is `lantern:ratelimit:renders:*`.
        public var pattern: String
        public var commands: [String]
        /// Read only (`%R~`), else read and write (`~`).
        public var readOnly: Bool

        public init(_ pattern: String, _ commands: [String], readOnly: Bool = false) {
            self.pattern = pattern
            self.commands = commands
            self.readOnly = readOnly
        }
    }

    /// The service, and its Redis user's name.
    public var service: String
    /// Streams it appends to (its outbox relay's `XADD`).
    public var publishes: [EventStream]
    /// Streams it reads through its consumer group (and whose dead-letter streams it appends to).
    public var consumes: [EventStream]
    /// Streams it reads without a group (`XREAD`: the gateway's real-time feed).
    public var follows: [EventStream]
    public var keys: [Keys]

    public init(_ service: String, publishes: [EventStream] = [], consumes: [EventStream] = [], follows: [EventStream] = [], keys: [Keys] = []) {
        self.service = service
        self.publishes = publishes
        self.consumes = consumes
        self.follows = follows
        self.keys = keys
    }

    /// `RateLimiter`'s script: `INCR`, `PEXPIRE` on first use, `PTTL`.
    static let counterCommands = ["evalsha", "eval", "incr", "pexpire", "pttl"]
    /// The accounts' model calls a day (`ModelCallBudget`), counted by content and health-brain alike.
    static let modelCalls = Keys(":ratelimit:llm-calls:*", counterCommands)

    /// Deleted accounts (`StreamNames.erasedAccount`): identity marks them, every service that takes tokens asks.
    static let erasedAccounts = Keys(".erased.*", ["get", "mget"], readOnly: true)

    public static let all: [RedisAccess] = [
        RedisAccess("identity", publishes: [IdentityEvents.stream, PushRequest.stream, RealtimeFrame.stream],
                    keys: [Keys(".erased.*", ["set", "get", "mget"])]),
        RedisAccess("media", publishes: [.events(MediaEvents.producer), PushRequest.stream, RealtimeFrame.stream],
                    consumes: [IdentityEvents.stream], keys: [erasedAccounts]),
        RedisAccess("astrology", keys: [erasedAccounts]),
        RedisAccess("content", publishes: [.events(ContentEvents.producer), PushRequest.stream, RealtimeFrame.stream],
                    consumes: [IdentityEvents.stream, .events(GamificationEvents.producer)],
                    keys: [modelCalls, Keys(":ratelimit:renders:*", counterCommands), erasedAccounts]),
        RedisAccess("gamification", publishes: [.events(GamificationEvents.producer), PushRequest.stream, RealtimeFrame.stream],
                    consumes: [IdentityEvents.stream, .events(ContentEvents.producer)], keys: [erasedAccounts]),
        RedisAccess("health-brain", publishes: [.events(SymbiEvents.producer), SymbiEvents.EvolutionRequested.stream, PushRequest.stream,
                                                RealtimeFrame.stream],
                    consumes: [IdentityEvents.stream, SymbiEvents.Evolved.stream], keys: [modelCalls, erasedAccounts]),
        RedisAccess("push-worker", consumes: [IdentityEvents.stream, PushRequest.stream],
                    keys: [Keys(".push.retries", ["zadd", "zrem", "zcard", "zrangebyscore", "eval", "evalsha"]),
                           Keys(".push.sent.*", ["exists", "set"])]),
        RedisAccess("evolution-worker", publishes: [SymbiEvents.Evolved.stream],
                    consumes: [SymbiEvents.EvolutionRequested.stream, IdentityEvents.stream],
                    // The accounts' image-model calls (`ModelCallBudget.image`).
                    keys: [Keys(":ratelimit:image-calls:*", counterCommands)]),
        RedisAccess("gateway", follows: [RealtimeFrame.stream],
                    keys: [Keys(":ratelimit:*", counterCommands + ["incrby"]),
                           // `POST /development/clock` moves the development stack's clock (refused outside development).
                           Keys(".development.clock_offset_ms", ["get", "incrby"]), erasedAccounts]),
    ]

    public static func of(_ service: String) -> RedisAccess? { all.first { $0.service == service } }

    /// The user's rules as `ACL SETUSER <service>` takes them after its name, the password left to the caller
    /// (`>password` or `#sha256`): reset, then what the table grants. One selector per kind of access, so a command
    /// is allowed only on its own keys (`XADD` on the service's own streams, never on those it reads).
    public func rules(streams: StreamNames) -> [String] {
        var rules = ["reset", "on", "+ping", "+select", "+hello", "+echo"]
        let consumed = consumes.map(streams.name(of:))
        let deadLetters = consumed.map(streams.deadLetter(of:))
        if !consumed.isEmpty {
            // Groups: create, read, acknowledge, take over, inspect; the gauges' lengths of the dead-letter streams.
            // XRANGE: the erasure audit reads back the deletions of the last hours (`ErasureAudit`).
            rules += ["+xreadgroup", "+xack", "+xautoclaim", "+xpending", "+xgroup|create", "+xinfo|groups", "+xlen", "+xrange"]
            rules += consumed.map { "~" + $0 } + deadLetters.map { "%R~" + $0 }
        }
        let appended = publishes.map(streams.name(of:)) + deadLetters
        if !appended.isEmpty { rules.append("(+xadd " + appended.map { "~" + $0 }.joined(separator: " ") + ")") }
        let followed = follows.map(streams.name(of:))
        if !followed.isEmpty { rules.append("(+xread +xrevrange " + followed.map { "%R~" + $0 }.joined(separator: " ") + ")") }
        for grant in keys {
            rules.append("(" + grant.commands.map { "+" + $0 }.joined(separator: " ") + " " + (grant.readOnly ? "%R~" : "~")
                         + streams.prefix + grant.pattern + ")")
        }
        // Every process follows the development stack's clock (`ServiceBuilder.addRedis`, development only).
        if !keys.contains(where: { $0.pattern == ".development.clock_offset_ms" }) {
            rules.append("(+get %R~" + streams.developmentClockOffset + ")")
        }
        return rules
    }

    /// The ACL file of a deployment (`infra/redis/users.acl`, kept equal to this by a test): every service's user with
    /// `{sha256:<service>}` where the SHA-256 of its password goes (`scripts/redis-users.sh` fills them in), and a
    /// `default` user that may only `PING` (health checks), so a connection that does not sign in can do nothing.
    public static func aclFile(streams: StreamNames = StreamNames()) -> String {
        var lines = [
            "# GENERATED from RedisAccess.all (Shared/LanternContracts/RedisAccess.swift); a test keeps it equal. Each service's",
            "# Redis user, for STREAM_PREFIX=\(streams.prefix). scripts/redis-users.sh replaces {sha256:<service>} with the SHA-256 of",
            "# the service's password (make compose-secrets, make up; docs/deploy.md).",
            "user default on nopass resetkeys resetchannels -@all +ping",
        ]
        for access in all {
            lines.append((["user", access.service] + access.rules(streams: streams) + ["#{sha256:\(access.service)}"]).joined(separator: " "))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
