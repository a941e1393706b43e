import Crypto
import Ephemeris
import Foundation
import Hummingbird
import LanternCore
import LanternDatabase
import LanternHTTP
import LanternTokens
import Logging
import PostgresNIO
import ServiceLifecycle

/// Builds the `astrology` application: places, natal charts, Ba Zi and lunisolar calendars. The only executable
/// that links the (AGPL-3.0) Swiss Ephemeris; other services ask it over HTTP.
public func buildAstrologyApplication(_ configuration: AstrologyConfiguration, clock: WallClock = .system,
                                      logger: Logger? = nil) async throws -> some ApplicationProtocol {
    let logger = configuration.process.logger(logger)
    let ephemeris = SwissEphemeris(dataPath: configuration.ephemerisPath)
    if !FileManager.default.fileExists(atPath: configuration.ephemerisPath + "/sepl_18.se1") {
        logger.warning("Swiss Ephemeris files not found; charts use the Moshier theory", metadata: ["path": "\(configuration.ephemerisPath)"])
    }
    let postgres = PostgresClient(configuration: try .lantern(url: configuration.databaseURL), backgroundLogger: logger)
    let places = PlaceStore(client: postgres, logger: logger)
    let keySet = RemoteKeySet(url: configuration.identityURL.appendingPathComponent(".well-known/jwks.json").absoluteString,
                              httpClient: .shared, maxAge: .seconds(600), logger: logger)
    let verifier = AccessTokenVerifier(keySet: keySet, clock: clock)
    let requireAuth = RequireAccessToken(verifier: verifier)
    let requireService = RequireAccessToken(verifier: verifier, audience: TokenAudience.service)

    var readiness = ReadinessChecks()
    readiness.addPostgres(postgres)
    readiness.add("ephemeris") {
        _ = try await ephemeris.compute { try $0.position(of: .sun, julianDayUT: 2_451_545) }
    }
    let router = ServiceRouter.make(readiness: readiness)
    ChartsController(ephemeris: ephemeris, fingerprintKey: SymmetricKey(data: Data(configuration.fingerprintKey.utf8)), places: places)
        .addRoutes(to: router, requireAuth: requireAuth)
    ChineseController(ephemeris: ephemeris, calendars: LunisolarCalendars(ephemeris: ephemeris), places: places)
        .addRoutes(to: router, requireAuth: requireAuth, requireService: requireService)
    PlacesController(store: places).addRoutes(to: router, requireAuth: requireAuth)
    var app = Application(
        router: router,
        configuration: .init(address: .hostname(configuration.process.host, port: configuration.process.port), serverName: "lantern-astrology"),
        services: [postgres, EphemerisLifecycle(ephemeris: ephemeris)],
        logger: logger
    )
    app.beforeServerStarts {
        try await Migrator.migrate(schema: "astrology", migrations: try Migration.load(from: AstrologyResources.migrations), client: postgres, logger: logger)
        if let file = configuration.placesFile { try await places.loadIfEmpty(from: file) }
        // Searches are served from memory: build the index before the first request rather than during it.
        _ = try await places.index()
    }
    return app
}

enum AstrologyResources {
    static var migrations: URL { Bundle.module.url(forResource: "Migrations", withExtension: nil)! }
}

/// Stops the ephemeris thread after the server.
struct EphemerisLifecycle: Service {
    let ephemeris: SwissEphemeris
    func run() async throws {
        try? await gracefulShutdown()
        try await ephemeris.shutdown()
    }
}
