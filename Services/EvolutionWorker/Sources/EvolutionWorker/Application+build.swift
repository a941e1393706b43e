import AsyncHTTPClient
import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import LanternHTTP
import LanternLLM
import LanternObjectStorage
import LanternService
import Logging
import Metrics
import NIOPosix

/// The image model, when a test replaces the one built from the configuration.
public enum ImageModelDependency: ServiceDependencyKey {
    public typealias Value = any ImageModel
}

extension ServiceDependencies {
    public var imageModel: (any ImageModel)? {
        get { self[ImageModelDependency.self] }
        set { self[ImageModelDependency.self] = newValue }
    }
}

/// Builds the `evolution-worker`: a consumer of `lantern.jobs.evolution` that records each job, the studio that
/// draws due jobs on the periodic helper (the image model or the local generator) and stores the pictures where
/// health-brain serves them, and a consumer of identity's `user.deleted` that deletes them. It has no API: its HTTP
/// port answers `/health/live` and everything else is on its operations port.
public func buildEvolutionWorkerApplication(
    _ configuration: EvolutionWorkerConfiguration,
    dependencies: ServiceDependencies = .init(),
    logger: Logger? = nil
) async throws -> some ApplicationProtocol {
    let clock = dependencies.clock
    var service = ServiceBuilder("evolution-worker", process: configuration.process, streamPrefix: configuration.streamPrefix, clock: clock,
                                 logger: logger)
    MetricHelp.register(EvolutionWorkerMetrics.metricHelp)
    let postgres = try service.addDatabase(url: configuration.databaseURL, schema: JobStore.schema, migrations: EvolutionWorkerResources.migrations)
    let redis = try service.addRedis(url: configuration.redisURL)
    let outbox = service.addOutbox()
    service.addErasedUsers()
    service.addHousekeeping(JobStore.housekeeping)
    let logger = service.logger

    let files = StoredImageFiles(objects: try service.addObjectStorage(configuration.storage))

    let painter: any EvolutionPainter
    let local = LocalPainter(size: configuration.imageSize)
    let budget = ModelCallBudget.image(callsPerPeriod: configuration.imageCallsPerAccount, redis: redis, prefix: configuration.streamPrefix,
                                       clock: clock, logger: logger)
    switch (configuration.generator, dependencies.imageModel, configuration.gemini) {
    case (.model, let model?, _):
        painter = BudgetedPainter(model: ModelPainter(model: model, modelID: configuration.imageModel, timeout: configuration.modelTimeout,
                                                      size: configuration.imageSize),
                                  fallback: local, budget: budget, logger: logger)
    case (.model, nil, let gemini?):
        painter = BudgetedPainter(model: ModelPainter(model: GeminiImageProvider(baseURL: gemini.baseURL, apiKey: gemini.apiKey, http: dependencies.httpClient),
                                                      modelID: configuration.imageModel, timeout: configuration.modelTimeout, size: configuration.imageSize),
                                  fallback: local, budget: budget, logger: logger)
    default:
        painter = local
    }
    logger.info("evolutions drawn by \(painter.generator == .model ? "the image model \(configuration.imageModel)" : "Lantern's procedural generator")")

    let store = JobStore(client: postgres, outbox: outbox, logger: logger)
    let jobsStream = service.streams.name(of: SymbiEvents.EvolutionRequested.stream)
    let deadLetters = DeadLetters(redis: redis, streams: service.streams)
    // A pass's drawings all end (or time out) before the lease does, so a job is only taken twice if its worker died.
    let lease = configuration.modelTimeout + .seconds(60)
    let studio = EvolutionStudio(jobs: store, files: files, painter: painter, policy: configuration.retry, clock: clock, lease: lease,
                                 logger: logger) { job, reason in
        try await deadLetters.add(event: job.request, stream: jobsStream, entry: "", group: "evolution-worker", deliveries: job.attempts, reason: reason,
                                  extra: [("evolutionId", job.evolutionId.lowercased)])
    }
    service.consume(SymbiEvents.EvolutionRequested.stream, handlers: EvolutionJobsConsumer(store: store, clock: clock).handlers)
    service.consume(IdentityEvents.stream, handlers: IdentityEventsConsumer(store: store, files: files, clock: clock).handlers)
    service.addPeriodic(PeriodicWork("evolution_jobs", every: configuration.interval, batch: configuration.concurrency) {
        try await studio.runDue(limit: configuration.concurrency)
    })
    service.addGaugeSample {
        let counts = try await store.counts()
        for status in ["pending", "done", "dead"] {
            Gauge(label: "lantern_evolution_jobs", dimensions: [("status", status)]).record(counts[status] ?? 0)
        }
    }

    return service.application(router: buildEvolutionWorkerRouter(service.makeRouter()))
}

/// evolution-worker's routes: none of its own (it answers `/health/live` here and its operations routes on `OPS_PORT`);
/// jobs come from `lantern.jobs.evolution`, never over HTTP.
func buildEvolutionWorkerRouter(_ router: Router<LanternRequestContext>) -> Router<LanternRequestContext> {
    router
}

enum EvolutionWorkerResources {
    static var migrations: URL? { Bundle.module.url(forResource: "Migrations", withExtension: nil) }
}

/// evolution-worker's own metrics.
enum EvolutionWorkerMetrics {
    static let metricHelp: [String: String] = [
        "lantern_evolution_jobs": "Evolution image jobs by status (pending, done, dead).",
    ]
}
