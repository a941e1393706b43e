import AsyncHTTPClient
import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP
import LanternService
import LanternTokens
import Logging

/// Builds the `identity` application: accounts, sessions, devices, pairing, and their events.
public func buildIdentityApplication(
    _ configuration: IdentityConfiguration,
    dependencies: ServiceDependencies = .init(),
    logger: Logger? = nil
) async throws -> some ApplicationProtocol {
    let clock = dependencies.clock
    var service = ServiceBuilder("identity", process: configuration.process, streamPrefix: configuration.streamPrefix, clock: clock, logger: logger)
    let postgres = try service.addDatabase(url: configuration.databaseURL, schema: IdentityDatabase.schema, migrations: IdentityResources.migrations)
    try service.addRedis(url: configuration.redisURL)
    let outbox = service.addOutbox()
    service.addHousekeeping(IdentityDatabase.housekeeping)
    let logger = service.logger

    let db = IdentityDatabase(client: postgres, outbox: outbox, clock: clock, logger: logger)
    let pairing = PairingStore(db: db)
    guard let erasures = service.erasedAccounts else { preconditionFailure("identity marks deleted accounts in Redis") }
    // A mark outlives every token of the account: its lifetime, the verifiers' leeway and a minute to spare.
    let accounts = AccountStore(db: db, pairing: pairing, erasures: erasures,
                                tokenLifetime: .seconds(configuration.accessTokenLifetime + AccessTokenVerifier.defaultLeeway + 60))
    let keys = SigningKeys(configured: configuration.signingKey, db: db, lifetime: configuration.accessTokenLifetime, clock: clock)
    // Signing keys are loaded (or made) once, before the first sign-in.
    service.beforeServerStarts { _ = try await keys.issuer() }

    func providerVerifier(_ method: String, _ provider: IdentityConfiguration.Provider?) -> ExternalIdentityVerifier? {
        provider.map {
            ExternalIdentityVerifier(method: method, keySet: RemoteKeySet(url: $0.keySetURL, httpClient: dependencies.httpClient,
                                                                          minRefreshInterval: .seconds(1), logger: logger),
                                     issuers: $0.issuers, audiences: $0.audiences, clock: clock.outsideWorld, leeway: 60)
        }
    }
    // Tokens are verified with the key in hand; no HTTP round trip to ourselves.
    let verifier = AccessTokenVerifier(clock: clock) { kid in try await keys.verifier().keyCollection(for: kid) }.refusingErased(erasures)

    let router = buildIdentityRouter(
        service.makeRouter(),
        requireAuth: RequireAccessToken(verifier: verifier),
        auth: AuthController(accounts: accounts, sessions: SessionStore(db: db, refreshLifetime: configuration.refreshTokenLifetime),
                             keys: keys, google: providerVerifier("google", configuration.google),
                             apple: providerVerifier("apple", configuration.apple), deviceSignInApps: configuration.deviceSignInApps),
        me: MeController(accounts: accounts, devices: DeviceStore(db: db)),
        pairing: PairingController(pairing: pairing),
        serviceTokens: ServiceTokensController(clients: ServiceClients(secrets: configuration.serviceSecrets), keys: keys)
    )
    return service.application(router: router)
}

/// identity's routes: `/v1/auth`, `/.well-known/jwks.json`, `/v1/me`, `/v1/pairing` and its part of the real-time state.
func buildIdentityRouter(_ router: Router<LanternRequestContext>, requireAuth: RequireAccessToken,
                         auth: AuthController, me: MeController, pairing: PairingController,
                         serviceTokens: ServiceTokensController) -> Router<LanternRequestContext> {
    router.addRoutes(auth.endpoints(requireAuth: requireAuth), atPath: "/v1/auth")
    router.addRoutes(auth.keySet, atPath: "/.well-known")
    router.group("/v1/me").add(middleware: requireAuth).addRoutes(me.endpoints)
    router.group("/v1/pairing").add(middleware: requireAuth).addRoutes(pairing.endpoints)
    router.group(RouterPath(RealtimeState.path)).add(middleware: requireAuth).addRoutes(pairing.realtimeState)
    router.addRoutes(serviceTokens.endpoints, atPath: RouterPath(IdentityEndpoint.serviceTokenPath))
    return router
}

enum IdentityResources {
    static var migrations: URL? { Bundle.module.url(forResource: "Migrations", withExtension: nil) }
}
