import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP
import LanternLLM
import LanternService
import LanternTokens
import Logging

/// Builds the `health-brain` application: Symbi's pets fed by health data (kept raw at most 24 hours), the day's
/// brain on the periodic helper, calm sessions, and evolutions triggered here and drawn by `evolution-worker`.
public func buildHealthBrainApplication(
    _ configuration: HealthBrainConfiguration,
    dependencies: ServiceDependencies = .init(),
    logger: Logger? = nil
) async throws -> some ApplicationProtocol {
    var service = ServiceBuilder("health-brain", process: configuration.process, streamPrefix: configuration.streamPrefix,
                                 clock: dependencies.clock, logger: logger)
    let postgres = try service.addDatabase(url: configuration.databaseURL, schema: PetStore.schema, migrations: HealthBrainResources.migrations)
    let redis = try service.addRedis(url: configuration.redisURL)
    let outbox = service.addOutbox()
    service.addErasedUsers()
    service.addHousekeeping(PetStore.housekeeping)
    let clock = dependencies.clock
    let catalogue = try StateCatalogue.load(try HealthBrainResources.file("Catalogue/states.json"))

    let store = PetStore(client: postgres, outbox: outbox, logger: service.logger)
    let pictures = StoredEvolutionPictures(objects: try service.addObjectStorage(configuration.storage))
    let router = configuration.llm.makeRouter(local: LocalGenerator(grammars: [:]), http: dependencies.httpClient, redis: redis,
                                              prefix: configuration.streamPrefix, clock: clock, logger: service.logger)
    let model = RoutedMoodModel(router: router)
    if !model.hasModel { service.logger.info("no model for the brain (LLM_MODELS_SYMBI_BRAIN, GEMINI_API_KEY): Lantern's local brain decides") }
    // The purge runs every interval exactly (no jitter) and deletes what is older than 24 hours less one interval, so
    // no raw row lives 24 hours past its processing even just before the next pass.
    let retention = 86_400 - configuration.purgeInterval.inSeconds
    let care = SymbiCare(records: store, pictures: pictures, brain: Brain(model: model, budget: configuration.brainTimeout),
                         schedule: BrainSchedule(hour: configuration.brainHour, window: configuration.brainWindow), clock: clock,
                         logger: service.logger, rawRetention: retention)

    // At most BRAIN_CALLS_PER_PASS calls per interval (no draining at once: the provider's rate limit is the point),
    // on one replica at a time: the lease outlasts a pass whose calls wait the whole timeout.
    service.addPeriodic(PeriodicWork("symbi_brain", every: configuration.brainInterval,
                                     lease: configuration.brainInterval + configuration.brainTimeout + .seconds(1)) {
        try await care.runBrain(limit: configuration.brainCallsPerPass, concurrency: configuration.brainConcurrency)
    })
    service.addPeriodic(PeriodicWork("raw_metrics_purge", every: configuration.purgeInterval, jitter: 0, lease: configuration.purgeInterval) {
        try await care.purge()
    })
    service.consume(IdentityEvents.stream, handlers: IdentityEventsConsumer(store: store, clock: clock).handlers)
    service.consume(SymbiEvents.Evolved.stream, handlers: EvolutionEventsConsumer(store: store, clock: clock).handlers)

    let verifier = service.addAccessTokens(identity: configuration.identityURL)
    let routes = buildHealthBrainRouter(service.makeRouter(), requireAuth: RequireAccessToken(verifier: verifier),
                                        symbi: SymbiController(care: care, catalogue: catalogue))
    return service.application(router: routes)
}

/// health-brain's routes: `/v1/symbi/…`.
func buildHealthBrainRouter(_ router: Router<LanternRequestContext>, requireAuth: RequireAccessToken,
                            symbi: SymbiController) -> Router<LanternRequestContext> {
    router.group("/v1/symbi").add(middleware: requireAuth).addRoutes(symbi.routes)
    return router
}

/// The brain's model: the LLM router, with one attempt of one model (`HealthBrainConfiguration`).
struct RoutedMoodModel: MoodModel {
    let router: LLMRouter
    var hasModel: Bool { router.route(for: Brain.task).contains { $0 != .local } }
    func generate(_ request: LLMRequest) async throws -> GeneratedText { try await router.generate(request) }
}

enum HealthBrainResources {
    static var migrations: URL? { Bundle.module.url(forResource: "Migrations", withExtension: nil) }

    static func file(_ path: String) throws -> URL {
        guard let url = Bundle.module.resourceURL?.appendingPathComponent(path), FileManager.default.fileExists(atPath: url.path) else {
            throw CatalogueError("health-brain's bundle has no \(path)")
        }
        return url
    }
}
