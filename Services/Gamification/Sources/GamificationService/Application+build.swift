import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP
import LanternService
import LanternTokens
import Logging

/// Builds the `gamification` application: streaks, badges and rewards as data per app (`Catalogue/<app>.json`),
/// fed by check-ins and by the activity events the catalogues count, with reminders on the periodic helper.
public func buildGamificationApplication(
    _ configuration: GamificationConfiguration,
    dependencies: ServiceDependencies = .init(),
    logger: Logger? = nil
) async throws -> some ApplicationProtocol {
    var service = ServiceBuilder("gamification", process: configuration.process, streamPrefix: configuration.streamPrefix,
                                 clock: dependencies.clock, logger: logger)
    let postgres = try service.addDatabase(url: configuration.databaseURL, schema: StreakStore.schema, migrations: GamificationResources.migrations)
    try service.addRedis(url: configuration.redisURL)
    let outbox = service.addOutbox()
    service.addErasedUsers()
    service.addHousekeeping(StreakStore.housekeeping)

    let achievements = Achievements(catalogues: try GameCatalogue.bundled())
    let streakStore = StreakStore(client: postgres, outbox: outbox, logger: service.logger)
    let activityStore = ActivityStore(client: postgres, outbox: outbox, logger: service.logger)
    let clock = dependencies.clock
    let streaks = Streaks(records: streakStore, achievements: achievements, clock: clock)

    let activity = ActivityConsumer(tally: Tally(records: activityStore, achievements: achievements, clock: clock), logger: service.logger)
    for (stream, types) in activity.streams.sorted(by: { "\($0.key)" < "\($1.key)" }) {
        service.consume(stream, batchSize: configuration.activityBatchSize) { batch in await activity.handle(batch: batch, types: types) }
    }
    service.consume(IdentityEvents.stream, handlers: IdentityEventsConsumer(store: activityStore, clock: clock).handlers)
    service.addPeriodic(PeriodicWork("streak_reminders", every: configuration.reminderInterval, batch: 200) {
        try await streakStore.sendDueReminders(now: clock.now(), limit: 200) { user, app, current in
            guard let catalogue = achievements.catalogues[app] else { return nil }
            return Reminders.push(user: user, catalogue: catalogue, current: current)
        }
    })

    let verifier = service.addAccessTokens(identity: configuration.identityURL)
    let router = buildGamificationRouter(service.makeRouter(), requireAuth: RequireAccessToken(verifier: verifier),
                                         gamification: GamificationController(streaks: streaks, profiles: activityStore))
    return service.application(router: router)
}

/// gamification's routes: `/v1/gamification/…`.
func buildGamificationRouter(_ router: Router<LanternRequestContext>, requireAuth: RequireAccessToken,
                             gamification: GamificationController) -> Router<LanternRequestContext> {
    router.group("/v1/gamification").add(middleware: requireAuth).addRoutes(gamification.routes)
    return router
}

enum GamificationResources {
    static var migrations: URL? { Bundle.module.url(forResource: "Migrations", withExtension: nil) }
}
