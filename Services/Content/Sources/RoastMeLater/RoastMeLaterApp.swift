import ContentKit
import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternDatabase
import LanternHTTP
import LanternLLM
import LanternService
import LanternTokens
import Logging
import PostgresNIO

/// RoastMeLater inside content: roasts by category, spice and mood in English and Vietnamese, their history,
/// favourites and reactions. Its LLM task is `roast`, with the local grammar of `Catalogue/roasts.json`; its
/// catalogue is `Catalogue/catalogue.json`; its tables are `0003_roastmelater.sql`.
public enum RoastMeLaterContent {
    static let metricHelp: [String: String] = [
        "lantern_roastmelater_roasts_total": "RoastMeLater roasts written, by whether they are artisanal.",
        "lantern_roastmelater_names_refused_total": "Model roasts set aside because they named someone.",
    ]

    public static let module = ContentAppModule(
        app: .roastmelater, llmTasks: ["roast"],
        grammars: { try ContentBundle.catalogue("roasts.json", in: .module, as: [String: Grammar].self) },
        migrations: { try ContentBundle.migrations(in: .module) },
        metricHelp: metricHelp,
        configure: { settings in
            let configuration = try RoastMeLaterConfiguration(settings: settings)
            let catalogue = try catalogue()
            let seeds = try seedCollections()
            return { platform in RoastMeLaterApp(configuration, catalogue: catalogue, seeds: seeds, platform: platform) }
        })

    /// The categories, moods and spice levels.
    static func catalogue() throws -> RoastCatalogue {
        try ContentBundle.catalogue("catalogue.json", in: .module, as: RoastCatalogue.self)
    }

    /// The collections a fresh database starts with (`Catalogue/collections.json`); operators change them at run time.
    static func seedCollections() throws -> [RoastCollection] {
        struct File: Decodable { var collections: [RoastCollection] }
        return try ContentBundle.catalogue("collections.json", in: .module, as: File.self).collections
    }
}

struct RoastMeLaterApp: ContentApp {
    let roasts: RoastsController
    let collections: CollectionsController
    let operators: OperatorCollectionsController
    let operatorKeys: OperatorKeys
    let widget: WidgetController
    let days: RoastsOfTheDay
    let dailyStore: DailyRoastStore
    let cardStore: CardStore
    let schedulerInterval: Duration
    let store: RoastStore
    let gamification: GamificationEventsConsumer
    let logger: Logger

    init(_ configuration: RoastMeLaterConfiguration, catalogue: RoastCatalogue, seeds: [RoastCollection], platform: ContentPlatform) {
        logger = platform.logger
        store = RoastStore(client: platform.postgres, outbox: platform.outbox, logger: platform.logger)
        let roasting = Roasting(records: store, writer: RoastWriter(generator: platform.texts, local: platform.local), catalogue: catalogue,
                                budget: configuration.roastBudget, clock: platform.clock)
        let themes = Collections(records: CollectionStore(client: platform.postgres, logger: platform.logger),
                                 festivals: FestivalCalendarCache(astrology: platform.astrology, logger: platform.logger),
                                 catalogue: catalogue, seeds: seeds, clock: platform.clock)
        cardStore = CardStore(client: platform.postgres, logger: platform.logger)
        let cards = ShareCards(roasts: store, cards: cardStore, catalogue: catalogue, link: configuration.shareLink,
                               renders: platform.renders, clock: platform.clock)
        collections = CollectionsController(collections: themes)
        operators = OperatorCollectionsController(collections: themes)
        operatorKeys = configuration.operatorKeys
        dailyStore = DailyRoastStore(client: platform.postgres, logger: platform.logger)
        days = RoastsOfTheDay(records: dailyStore, writer: RoastWriter(generator: platform.texts, local: platform.local), catalogue: catalogue,
                              clock: platform.clock, budget: configuration.dailyBudget)
        widget = WidgetController(days: days, shareLink: configuration.shareLink)
        roasts = RoastsController(roasting: roasting, collections: themes, cards: cards, days: days, shareLink: configuration.shareLink)
        schedulerInterval = platform.schedulerInterval
        gamification = GamificationEventsConsumer(store: store, daily: dailyStore)
    }

    /// `/v1/roasts` (with `/v1/roasts/collections`) for the app; `/v1/operator/roastmelater` for its operators.
    func addRoutes(to router: Router<LanternRequestContext>, requireAuth: RequireAccessToken) {
        router.group("/v1/roasts/collections").add(middleware: requireAuth).addRoutes(collections.routes)
        router.group("/v1/roasts").add(middleware: requireAuth).addRoutes(roasts.routes)
        router.group("/v1/widgets/roastmelater").add(middleware: requireAuth).addRoutes(widget.routes)
        router.group("/v1/operator/roastmelater/collections").add(middleware: RequireOperatorKey(keys: operatorKeys, realm: "roastmelater-operators"))
            .addRoutes(operators.routes)
    }

    /// The roasts of the day, made ahead of each user's local midnight.
    var periodicWork: [PeriodicWork] {
        [PeriodicWork("roastmelater_roast_of_the_day", every: schedulerInterval, batch: RoastsOfTheDay.batch) { [days] in try await days.makeDue() }]
    }

    var consumers: [ContentConsumer] { [gamification.consumer] }

    /// The roasts, reactions, favourites and rewards; the widget's settings, roasts of the day and streak copy. The
    /// assembly has recorded the user as erased first (`ErasedUsers`): gamification's events about them still on
    /// their way are dropped, not turned back into a streak copy or a reward (`GamificationEventsConsumer`).
    func erase(_ user: UUID, at date: Date, on connection: PostgresConnection) async throws {
        try await store.erase(user, on: connection)
        try await dailyStore.erase(user, on: connection)
        try await cardStore.erase(user, on: connection)
    }
}
