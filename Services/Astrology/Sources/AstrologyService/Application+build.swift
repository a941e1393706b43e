import Crypto
import Ephemeris
import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP
import LanternService
import LanternTokens
import Logging
import ServiceLifecycle

/// Builds the `astrology` application: places, natal charts, Ba Zi and lunisolar calendars. The only executable
/// that links the (AGPL-3.0) Swiss Ephemeris; other services ask it over HTTP.
public func buildAstrologyApplication(_ configuration: AstrologyConfiguration, dependencies: ServiceDependencies = .init(),
                                      logger: Logger? = nil) async throws -> some ApplicationProtocol {
    let clock = dependencies.clock
    var service = ServiceBuilder("astrology", process: configuration.process, streamPrefix: configuration.streamPrefix, clock: clock, logger: logger)
    let postgres = try service.addDatabase(url: configuration.databaseURL, schema: "astrology", migrations: AstrologyResources.migrations)
    // Deleted accounts are marked there; in development the stack's shared clock is too.
    try service.addRedis(url: configuration.redisURL)
    let logger = service.logger

    let ephemeris = SwissEphemeris(dataPath: configuration.ephemerisPath)
    if !FileManager.default.fileExists(atPath: configuration.ephemerisPath + "/sepl_18.se1") {
        logger.warning("Swiss Ephemeris files not found; charts use the Moshier theory", metadata: ["path": "\(configuration.ephemerisPath)"])
    }
    service.addService(EphemerisLifecycle(ephemeris: ephemeris))
    service.addReadiness("ephemeris") {
        _ = try await ephemeris.compute { try $0.position(of: .sun, julianDayUT: 2_451_545) }
    }
    let places = PlaceStore(client: postgres, logger: logger)
    service.beforeServerStarts {
        if let file = configuration.placesFile { try await places.loadIfEmpty(from: file) }
        // Searches are served from memory: build the index before the first request rather than during it.
        _ = try await places.index()
    }

    let verifier = service.addAccessTokens(identity: configuration.identityURL)
    let calendars = LunisolarCalendars(ephemeris: ephemeris)
    let router = buildAstrologyRouter(
        service.makeRouter(),
        requireAuth: RequireAccessToken(verifier: verifier),
        requireService: RequireAccessToken(verifier: verifier, audience: TokenAudience.service, callers: AstrologyEndpoint.callers),
        charts: ChartsController(charts: NatalCharts(ephemeris: ephemeris, fingerprintKey: SymmetricKey(data: Data(configuration.fingerprintKey.utf8))),
                                 places: places),
        bazi: BaziController(readings: BaziReadings(ephemeris: ephemeris, calendars: calendars), places: places),
        calendar: CalendarController(calendars: calendars, festivals: Festivals(ephemeris: ephemeris, calendars: calendars)),
        places: PlacesController(store: places)
    )
    return service.application(router: router)
}

/// astrology's routes: `/v1/astrology/…` for apps; charts, Ba Zi and the calendars also at `/internal/astrology/…`
/// for services (service tokens, audience `internal`, of the callers each route names: content builds Lucky Day
/// prompts from Ba Zi descriptors, AstroSvitla reports from natal charts and dates RoastMeLater's seasonal
/// collections by the Vietnamese festivals). The gateway never forwards `/internal`.
func buildAstrologyRouter(_ router: Router<LanternRequestContext>, requireAuth: RequireAccessToken, requireService: RequireAccessToken,
                          charts: ChartsController, bazi: BaziController, calendar: CalendarController,
                          places: PlacesController) -> Router<LanternRequestContext> {
    router.group("/v1/astrology/charts").add(middleware: requireAuth).addRoutes(charts.endpoints)
    router.group("/internal/astrology/charts").add(middleware: requireService).addRoutes(charts.endpoints)
    router.group("/v1/astrology/places").add(middleware: requireAuth).addRoutes(places.endpoints)
    for (prefix, middleware) in [("/v1/astrology", requireAuth), ("/internal/astrology", requireService)] {
        router.group(RouterPath(prefix)).add(middleware: middleware).addRoutes(bazi.endpoints).addRoutes(calendar.endpoints)
    }
    return router
}

enum AstrologyResources {
    static var migrations: URL? { Bundle.module.url(forResource: "Migrations", withExtension: nil) }
}

/// Stops the ephemeris thread after the server.
struct EphemerisLifecycle: Service {
    let ephemeris: SwissEphemeris
    func run() async throws {
        try? await gracefulShutdown()
        try await ephemeris.shutdown()
    }
}
