import AsyncHTTPClient
import Foundation
import Hummingbird
import JWTKit
import LanternCore
import LanternDatabase
import LanternEvents
import LanternHTTP
import LanternRedis
import LanternTokens
import Logging
import PostgresNIO
import ServiceLifecycle

/// Swappable dependencies of `identity`; tests replace the clock and the HTTP client.
public struct IdentityDependencies: Sendable {
    public var clock: WallClock
    public var httpClient: HTTPClient

    public init(clock: WallClock = .system, httpClient: HTTPClient = .shared) {
        self.clock = clock
        self.httpClient = httpClient
    }
}

/// Builds the `identity` application: accounts, sessions, devices, and their events.
public func buildIdentityApplication(
    _ configuration: IdentityConfiguration,
    dependencies: IdentityDependencies = .init(),
    logger: Logger? = nil
) async throws -> some ApplicationProtocol {
    let logger = configuration.process.logger(logger)
    let clock = dependencies.clock

    let postgres = PostgresClient(configuration: try .lantern(url: configuration.databaseURL), backgroundLogger: logger)
    let redisEndpoint = try RedisEndpoint(url: configuration.redisURL)
    let redis = RedisClient(endpoint: redisEndpoint, size: 2)
    let streams = StreamNames(prefix: configuration.streamPrefix)
    let outbox = Outbox(schema: IdentityStore.schema, streams: streams)
    let store = IdentityStore(client: postgres, outbox: outbox, clock: clock,
                              refreshLifetime: configuration.refreshTokenLifetime, logger: logger)
    let keys = SigningKeys(configured: configuration.signingKey, store: store, lifetime: configuration.accessTokenLifetime, clock: clock)

    func providerVerifier(_ method: String, _ provider: IdentityConfiguration.Provider?) -> ExternalIdentityVerifier? {
        provider.map {
            ExternalIdentityVerifier(method: method, keySet: RemoteKeySet(url: $0.keySetURL, httpClient: dependencies.httpClient,
                                                                          minRefreshInterval: .seconds(1), logger: logger),
                                     issuers: $0.issuers, audiences: $0.audiences, clock: clock, leeway: 60)
        }
    }

    // Tokens are verified with the key in hand; no HTTP round trip to ourselves.
    let verifier = AccessTokenVerifier(clock: clock) { kid in try await keys.verifier().keyCollection(for: kid) }
    let requireAuth = RequireAccessToken(verifier: verifier)

    var readiness = ReadinessChecks()
    readiness.addPostgres(postgres)
    readiness.addRedis(redis)
    let router = ServiceRouter.make(readiness: readiness)
    AuthController(store: store, keys: keys, google: providerVerifier("google", configuration.google),
                   apple: providerVerifier("apple", configuration.apple), deviceSignInApps: configuration.deviceSignInApps)
        .addRoutes(to: router, requireAuth: requireAuth)
    MeController(store: store).addRoutes(to: router.group("/v1/me").add(middleware: requireAuth))
    PairingController(pairing: PairingStore(store: store)).addRoutes(to: router.group("/v1/pairing").add(middleware: requireAuth))

    let migrated = StartupGate()
    var app = Application(
        router: router,
        configuration: .init(address: .hostname(configuration.process.host, port: configuration.process.port), serverName: "lantern-identity"),
        services: [postgres, RedisLifecycle(client: redis),
                   OutboxRelay(outbox: outbox, client: postgres, publisher: EventPublisher(redis: redis), logger: logger, startAfter: migrated),
                   Housekeeping(client: postgres, rules: IdentityStore.housekeeping, clock: clock, logger: logger)],
        logger: logger
    )
    app.beforeServerStarts {
        let migrations = EventMigrations.all + (try Migration.load(from: IdentityResources.migrations))
        try await Migrator.migrate(schema: IdentityStore.schema, migrations: migrations, client: postgres, logger: logger)
        migrated.open()
        _ = try await keys.issuer()
    }
    return app
}

enum IdentityResources {
    static var migrations: URL {
        Bundle.module.url(forResource: "Migrations", withExtension: nil)!
    }
}
