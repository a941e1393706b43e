import AsyncHTTPClient
import Foundation
import Hummingbird
import JWTKit
import LanternCore
import LanternDatabase
import LanternEvents
import LanternHTTP
import LanternRedis
import LanternService
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

    let backbone = try ServiceBackbone(schema: IdentityStore.schema, databaseURL: configuration.databaseURL, redisURL: configuration.redisURL,
                                       streamPrefix: configuration.streamPrefix, logger: logger)
    let store = IdentityStore(client: backbone.postgres, outbox: backbone.outbox, clock: clock,
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

    let router = ServiceRouter.make(readiness: backbone.readiness)
    AuthController(store: store, keys: keys, google: providerVerifier("google", configuration.google),
                   apple: providerVerifier("apple", configuration.apple), deviceSignInApps: configuration.deviceSignInApps)
        .addRoutes(to: router, requireAuth: requireAuth)
    MeController(store: store).addRoutes(to: router.group("/v1/me").add(middleware: requireAuth))
    PairingController(pairing: PairingStore(store: store)).addRoutes(to: router.group("/v1/pairing").add(middleware: requireAuth))

    var app = Application(
        router: router,
        configuration: .init(address: .hostname(configuration.process.host, port: configuration.process.port), serverName: "lantern-identity"),
        services: backbone.services(clock: clock, housekeeping: IdentityStore.housekeeping),
        logger: logger
    )
    app.beforeServerStarts {
        try await backbone.migrate(try Migration.load(from: IdentityResources.migrations))
        _ = try await keys.issuer()
    }
    return app
}

enum IdentityResources {
    static var migrations: URL {
        Bundle.module.url(forResource: "Migrations", withExtension: nil)!
    }
}
