import ContentKit
import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP
import LanternLLM
import LanternService
import PostgresNIO

/// Lucky Day inside content: the profile from astrology's pillars, the daily cookie and its widget, fortunes made
/// ahead, "cookie ready" reminders. Its LLM tasks are `fortune` and `profile`, with the local grammars of
/// `Catalogue/luckyday.json`; its tables are `0001_luckyday.sql`.
public enum LuckyDayContent {
    static let metricHelp: [String: String] = [
        "lantern_luckyday_profiles_saved_total": "Lucky Day profiles saved, by whether their texts are artisanal.",
        "lantern_luckyday_fortunes_revealed_total": "Lucky Day cookies broken, by whether the fortune is artisanal.",
    ]

    public static let module = ContentAppModule(
        app: .luckyday, llmTasks: ["fortune", "profile"],
        grammars: { try ContentBundle.catalogue("luckyday.json", in: .module, as: [String: Grammar].self) },
        migrations: { try ContentBundle.migrations(in: .module) },
        metricHelp: metricHelp,
        configure: { settings in
            let configuration = try LuckyDayConfiguration(settings: settings)
            return { platform in LuckyDayApp(configuration, platform: platform) }
        })
}

extension AstrologyClient: BaziSource {}

struct LuckyDayApp: ContentApp {
    let fortunes: FortunesController
    let profiles: ProfileStore
    let pregenerator: Pregenerator
    let schedule: ScheduleStore
    let clock: WallClock
    let interval: Duration

    init(_ configuration: LuckyDayConfiguration, platform: ContentPlatform) {
        let logger = platform.logger
        let writer = FortuneWriter(generator: platform.texts, local: platform.local,
                                   poolSize: platform.local.grammars["fortune"]?.rules["core"]?.count ?? 0)
        profiles = ProfileStore(client: platform.postgres, logger: logger)
        schedule = ScheduleStore(client: platform.postgres, outbox: platform.outbox, logger: logger)
        let fortuneStore = FortuneStore(client: platform.postgres, outbox: platform.outbox, profiles: profiles, schedule: schedule, logger: logger)
        let luckyDay = LuckyDay(
            records: LuckyDayStore(profiles: profiles, fortunes: fortuneStore, schedule: schedule), astrology: platform.astrology,
            texts: ProfileTexts(generator: platform.texts, local: platform.local, budget: configuration.profileBudget),
            writer: writer, quietHours: configuration.quietHours, fortuneBudget: configuration.fortuneBudget, clock: platform.clock)
        fortunes = FortunesController(luckyDay: luckyDay)
        pregenerator = Pregenerator(schedule: schedule, fortunes: fortuneStore, writer: writer, clock: platform.clock,
                                    budget: configuration.pregenerationBudget, logger: logger)
        clock = platform.clock
        interval = platform.schedulerInterval
    }

    /// `/v1/fortunes` and `/v1/widgets/luckyday`.
    func addRoutes(to router: Router<LanternRequestContext>, requireAuth: RequireAccessToken) {
        router.group("/v1/fortunes").add(middleware: requireAuth).addRoutes(fortunes.fortunes)
        router.group("/v1/widgets/luckyday").add(middleware: requireAuth).addRoutes(fortunes.widget)
    }

    var periodicWork: [PeriodicWork] {
        [pregenerator.work(every: interval), ReminderScheduler.work(schedule: schedule, clock: clock, every: interval)]
    }

    /// The profile, fortunes and schedules.
    func erase(_ user: UUID, at date: Date, on connection: PostgresConnection) async throws {
        try await profiles.erase(user, on: connection)
    }
}
