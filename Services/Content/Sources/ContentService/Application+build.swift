import AsyncHTTPClient
import Foundation
import Hummingbird
import LanternAppStore
import LanternContracts
import LanternCore
import LanternHTTP
import LanternLLM
import LanternService
import LanternTokens
import Logging

/// Builds the `content` application: every AI text. Today: Lucky Day (profile, daily cookie, fortunes, widget),
/// with the LLM layer's router, its pre-generation worker and its reminder schedule.
public func buildContentApplication(
    _ configuration: ContentConfiguration,
    dependencies: ServiceDependencies = .init(),
    logger: Logger? = nil
) async throws -> some ApplicationProtocol {
    let clock = dependencies.clock
    var service = ServiceBuilder("content", process: configuration.process, streamPrefix: configuration.streamPrefix, clock: clock, logger: logger)
    let postgres = try service.addDatabase(url: configuration.databaseURL, schema: ContentResources.schema, migrations: ContentResources.migrations)
    try service.addRedis(url: configuration.redisURL)
    let outbox = service.addOutbox()
    service.addHousekeeping([.processedEvents(schema: ContentResources.schema)])
    let logger = service.logger

    let grammars = try ContentResources.grammars()
    let local = LocalGenerator(grammars: grammars)
    let router = configuration.llm.makeRouter(local: local, http: dependencies.httpClient, clock: clock, logger: logger)
    let writer = FortuneWriter(generator: router, local: local, poolSize: grammars["fortune"]?.rules["core"]?.count ?? 0)

    let profiles = ProfileStore(client: postgres, logger: logger)
    let schedule = ScheduleStore(client: postgres, outbox: outbox, logger: logger)
    let fortunes = FortuneStore(client: postgres, outbox: outbox, profiles: profiles, schedule: schedule, logger: logger)
    let tokens = configuration.serviceSecret.map {
        ServiceTokenSource(identity: configuration.identityURL, service: "content", secret: $0, http: dependencies.httpClient, clock: clock)
    }
    if tokens == nil { logger.warning("SERVICE_SECRET is not set: Lucky Day profiles and AstroSvitla charts cannot be computed (503)") }
    let astrology = AstrologyClient(client: InternalClient(service: "astrology", baseURL: configuration.astrologyURL, tokens: tokens,
                                                           http: dependencies.httpClient))
    let luckyDay = LuckyDay(
        records: LuckyDayStore(profiles: profiles, fortunes: fortunes, schedule: schedule),
        astrology: astrology,
        texts: ProfileTexts(generator: router, local: local, budget: configuration.profileBudget),
        writer: writer, quietHours: configuration.quietHours, fortuneBudget: configuration.fortuneBudget, clock: clock)

    let reportStore = ReportStore(client: postgres, outbox: outbox, logger: logger)
    let astroTexts = try ContentResources.astroSvitla()
    let reports = Reports(
        catalogue: try ReportCatalogue(areas: astroTexts.areas, bundleId: configuration.astrosvitlaBundleId),
        matcher: RuleMatcher(book: astroTexts.rules),
        writer: ReportWriter(generator: router, composer: ReportComposer(texts: astroTexts.texts), budget: configuration.reportBudget),
        verifier: try configuration.appStore.verifier(bundleId: configuration.astrosvitlaBundleId, clock: clock),
        charts: astrology,
        records: reportStore, clock: clock, logger: logger)

    service.consume(IdentityEvents.stream, handlers: IdentityEventsConsumer(profiles: profiles, reports: reportStore, clock: clock).handlers)
    let pregenerator = Pregenerator(schedule: schedule, fortunes: fortunes, writer: writer, clock: clock,
                                    budget: configuration.pregenerationBudget, logger: logger)
    service.addPeriodic(pregenerator.work(every: configuration.schedulerInterval))
    service.addPeriodic(ReminderScheduler.work(schedule: schedule, clock: clock, every: configuration.schedulerInterval))
    service.addPeriodic(ReportRetrier.work(reports, every: configuration.schedulerInterval))

    let verifier = AccessTokenVerifier(identity: configuration.identityURL, clock: clock, logger: logger)
    return service.application(router: buildContentRouter(service.makeRouter(), requireAuth: RequireAccessToken(verifier: verifier),
                                                          fortunes: FortunesController(luckyDay: luckyDay),
                                                          reports: ReportsController(reports: reports),
                                                          notifications: AppStoreNotificationsController(reports: reports)))
}

/// content's routes: Lucky Day's `/v1/fortunes` and `/v1/widgets/luckyday`; AstroSvitla's `/v1/reports` and the
/// App Store's notifications at `/v1/appstore/notifications` (public: Apple's signature is the credential).
func buildContentRouter(_ router: Router<LanternRequestContext>, requireAuth: RequireAccessToken,
                        fortunes: FortunesController, reports: ReportsController,
                        notifications: AppStoreNotificationsController) -> Router<LanternRequestContext> {
    router.group("/v1/fortunes").add(middleware: requireAuth).addRoutes(fortunes.fortunes)
    router.group("/v1/widgets/luckyday").add(middleware: requireAuth).addRoutes(fortunes.widget)
    router.group("/v1/reports").add(middleware: requireAuth).addRoutes(reports.endpoints)
    router.group("/v1/appstore/notifications").addRoutes(notifications.endpoints)
    return router
}

enum ContentResources {
    static let schema = "content"
    static var migrations: URL? { Bundle.module.url(forResource: "Migrations", withExtension: nil) }

    /// The local grammars of content's tasks (`Catalogue/luckyday.json`: task → rules).
    static func grammars() throws -> [String: Grammar] {
        guard let url = Bundle.module.url(forResource: "Catalogue/luckyday", withExtension: "json") else {
            throw ConfigurationError(variable: "-", message: "the Lucky Day catalogue is missing from the build")
        }
        return try JSONDecoder().decode([String: Grammar].self, from: Data(contentsOf: url))
    }

    /// AstroSvitla's catalogue (`Catalogue/astrosvitla/`): the areas, every rules file of `rules/`, the tips and
    /// framing texts. A rule file that does not load stops the start. Read once per process (1.2 MB of JSON: tests
    /// build many applications, and a parse per build would hold a thread each time).
    static func astroSvitla() throws -> (areas: [ReportCatalogue.Area], rules: RuleBook, texts: ReportTexts) {
        try loadedAstroSvitla.get()
    }

    private static let loadedAstroSvitla = Result { try loadAstroSvitla() }

    private static func loadAstroSvitla() throws -> (areas: [ReportCatalogue.Area], rules: RuleBook, texts: ReportTexts) {
        guard let folder = Bundle.module.url(forResource: "Catalogue/astrosvitla", withExtension: nil) else {
            throw ConfigurationError(variable: "-", message: "the AstroSvitla catalogue is missing from the build")
        }
        let decoder = JSONDecoder()
        let areas = try decoder.decode([ReportCatalogue.Area].self, from: Data(contentsOf: folder.appendingPathComponent("areas.json")))
        let texts = try decoder.decode(ReportTexts.self, from: Data(contentsOf: folder.appendingPathComponent("tips.json")))
        let files = try FileManager.default.contentsOfDirectory(at: folder.appendingPathComponent("rules"), includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
        var rules: [AstroRule] = []
        for file in files {
            do { rules += try decoder.decode([AstroRule].self, from: Data(contentsOf: file)) } catch {
                throw ConfigurationError(variable: "-", message: "rules file \(file.lastPathComponent): \(error)")
            }
        }
        return (areas, try RuleBook(rules), texts)
    }
}
