import ContentKit
import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP
import LanternService
import PostgresNIO

/// AstroSvitla inside content: life-area reports sold one by one through the App Store (purchases verified on the
/// server, refunds from App Store Server Notifications), written by a model from expert rules or composed locally,
/// exported as PDF. Its LLM task is `report`; its catalogue `Catalogue/` (areas, rules, tips); its tables
/// `0002_astrosvitla.sql`.
public enum AstroSvitlaContent {
    static let metricHelp: [String: String] = [
        "lantern_astrosvitla_reports_total": "AstroSvitla reports written, by life area and source (a model or the local generator).",
        "lantern_appstore_notifications_total": "App Store Server Notifications received, by outcome.",
    ]

    public static let module = ContentAppModule(
        app: .astrosvitla, llmTasks: ["report"],
        migrations: { try ContentBundle.migrations(in: .module) },
        metricHelp: metricHelp,
        configure: { settings in
            let configuration = try AstroSvitlaConfiguration(settings: settings)
            return { platform in try AstroSvitlaApp(configuration, platform: platform) }
        })

    /// The catalogue (`Catalogue/`): the areas, every rules file of `rules/`, the tips and framing texts. A rule file
    /// that does not load stops the start. Read once per process (1.2 MB of JSON: tests build many applications,
    /// and a parse per build would hold a thread each time).
    static func catalogue() throws -> (areas: [ReportCatalogue.Area], rules: RuleBook, texts: ReportTexts) {
        try loaded.get()
    }

    private static let loaded = Result { () throws -> (areas: [ReportCatalogue.Area], rules: RuleBook, texts: ReportTexts) in
        let areas = try ContentBundle.catalogue("areas.json", in: .module, as: [ReportCatalogue.Area].self)
        let texts = try ContentBundle.catalogue("tips.json", in: .module, as: ReportTexts.self)
        var rules: [AstroRule] = []
        for file in try ContentBundle.catalogueFiles("rules", in: .module) {
            rules += try ContentBundle.catalogue("rules/" + file.lastPathComponent, in: .module, as: [AstroRule].self)
        }
        return (areas, try RuleBook(rules), texts)
    }
}

extension AstrologyClient: ChartSource {}

struct AstroSvitlaApp: ContentApp {
    let reports: Reports
    let store: ReportStore
    let renders: RenderLimit
    let interval: Duration

    init(_ configuration: AstroSvitlaConfiguration, platform: ContentPlatform) throws {
        store = ReportStore(client: platform.postgres, outbox: platform.outbox, logger: platform.logger)
        let catalogue = try AstroSvitlaContent.catalogue()
        reports = Reports(
            catalogue: try ReportCatalogue(areas: catalogue.areas, bundleId: configuration.bundleId),
            matcher: RuleMatcher(book: catalogue.rules),
            writer: ReportWriter(generator: platform.texts, composer: ReportComposer(texts: catalogue.texts), budget: configuration.reportBudget),
            verifier: try platform.appStore.verifier(bundleId: configuration.bundleId, clock: platform.clock.outsideWorld),
            charts: platform.astrology, records: store, clock: platform.clock, logger: platform.logger)
        renders = platform.renders
        interval = platform.schedulerInterval
    }

    /// `/v1/reports`, and the App Store's notifications at `/v1/appstore/notifications` (public: Apple's signature is
    /// the credential).
    func addRoutes(to router: Router<LanternRequestContext>, requireAuth: RequireAccessToken) {
        router.group("/v1/reports").add(middleware: requireAuth).addRoutes(ReportsController(reports: reports, renders: renders).endpoints)
        router.group("/v1/appstore/notifications").addRoutes(AppStoreNotificationsController(reports: reports).endpoints)
    }

    var periodicWork: [PeriodicWork] { [ReportRetrier.work(reports, every: interval)] }

    /// Reports and purchases; each transaction leaves a tombstone.
    func erase(_ user: UUID, at date: Date, on connection: PostgresConnection) async throws {
        try await store.erase(user, at: date, on: connection)
    }
}
