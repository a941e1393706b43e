import Foundation
import GatewayRouting
import LanternContracts
import LanternCore
import LanternHTTP

/// Everything the gateway reads at start-up (see docs/configuration.md).
public struct GatewayConfiguration: ServiceConfiguration {
    /// The port when `HTTP_PORT` is not set (Services/services.tsv; a deployment test keeps them equal).
    public static let defaultPort = 8080

    public var process: ProcessSettings
    public var redisURL: String
    public var streamPrefix: String
    /// Base URL of each deployed service, by service name (plain `http://`: services are reached inside the
    /// deployment's network; TLS ends at the gateway). Routes of services missing here answer 503.
    public var upstreams: [String: URL]
    public var upstreamTimeout: TimeInterval
    public var maxBodyBytes: Int
    public var signInLimitPerMinute: Int
    /// `RATE_LIMIT_DEVICE_SIGNIN_PER_DAY`: device sign-ins per client address in 24 hours (the door to every
    /// per-account budget).
    public var deviceSignInLimitPerDay: Int
    public var userLimitPerMinute: Int
    /// Attempts at short secrets (Pairly invite codes), per user and per address.
    public var codeGuessLimitPerMinute: Int
    /// The proxies in front of the gateway whose `X-Forwarded-For` names the client (`TRUSTED_PROXIES`; none by
    /// default: the client is the connection's peer). Their connections are not capped per address either.
    public var trustedProxies: TrustedProxies
    /// A new connection must send its first request head within this many seconds.
    public var headerTimeout: TimeInterval
    /// A connection left idle between requests is closed after this many seconds.
    public var idleTimeout: TimeInterval
    /// Open connections from one client address (0: no cap).
    public var maxConnectionsPerAddress: Int
    /// The names the public port answers to (`ALLOWED_HOSTS`, DNS rebinding): in development its own names and those
    /// listed, elsewhere nil (any `Host`: the load balancer decides) unless `ALLOWED_HOSTS` is set.
    public var allowedHosts: AllowedHosts?

    /// Service name → the setting holding its URL (`identity.url` is `IDENTITY_URL`), for every service the route
    /// table forwards to.
    public static var upstreamVariables: [(service: String, key: String)] {
        Set(RouteTable.lantern.entries.map(\.service)).sorted().map { ($0, $0.replacingOccurrences(of: "-", with: ".") + ".url") }
    }

    public init(settings: Settings) throws {
        process = try ProcessSettings(serviceName: "gateway", settings: settings, defaultPort: Self.defaultPort)
        redisURL = try settings.secret("redis.url", default: "redis://127.0.0.1:6379/0")
        streamPrefix = settings.string("stream.prefix", default: "lantern")
        var upstreams: [String: URL] = [:]
        for (service, key) in Self.upstreamVariables {
            if service == "identity" {
                upstreams[service] = try settings.url(key, default: IdentityEndpoint.localURL, schemes: ["http"])
            } else if settings.string(key) != nil {
                upstreams[service] = try settings.url(key, schemes: ["http"])
            }
        }
        self.upstreams = upstreams
        upstreamTimeout = try settings.seconds("upstream.timeout", default: 10, range: 0.1...300)
        maxBodyBytes = try settings.int("gateway.max.body.bytes", default: 1 << 20, range: 1024...(64 << 20))
        signInLimitPerMinute = try settings.int("rate.limit.signin.per.minute", default: 30, range: 1...1_000_000)
        deviceSignInLimitPerDay = try settings.int("rate.limit.device.signin.per.day", default: 20, range: 1...1_000_000)
        userLimitPerMinute = try settings.int("rate.limit.user.per.minute", default: 600, range: 1...10_000_000)
        codeGuessLimitPerMinute = try settings.int("rate.limit.code.guess.per.minute", default: 10, range: 1...10_000)
        if settings.string("trust.forwarded.for") != nil {
            throw ConfigurationError(variable: "TRUST_FORWARDED_FOR",
                                     message: "is no longer read: list the address ranges of the proxies in front of the gateway in TRUSTED_PROXIES (e.g. 10.0.0.0/8)")
        }
        do {
            trustedProxies = try TrustedProxies(settings.list("trusted.proxies"))
        } catch {
            throw ConfigurationError(variable: "TRUSTED_PROXIES", message: "\(error)")
        }
        headerTimeout = try settings.seconds("gateway.header.timeout", default: 10, range: 0.1...300)
        idleTimeout = try settings.seconds("gateway.idle.timeout", default: 60, range: 1...3600)
        maxConnectionsPerAddress = try settings.int("gateway.max.connections.per.address", default: 512, range: 0...1_000_000)
        allowedHosts = process.apiHosts
    }
}
