import Foundation
import LanternContracts
import LanternCore
import LanternLLM
import LanternObjectStorage

/// Everything `evolution-worker` reads at start-up (see docs/configuration.md).
public struct EvolutionWorkerConfiguration: ServiceConfiguration {
    /// The port when `HTTP_PORT` is not set (Services/services.tsv; a deployment test keeps them equal).
    public static let defaultPort = 8088
    /// The spec's image model (Symbi Req 8.2).
    public static let defaultImageModel = "gemini-2.5-flash-image-preview"

    public var process: ProcessSettings
    public var databaseURL: String
    public var redisURL: String
    public var streamPrefix: String
    /// Where Symbi's pictures go (`SYMBI_STORAGE`…), the storage health-brain serves them from.
    public var storage: ObjectStorageSettings
    /// Who draws (`EVOLUTION_GENERATOR`): the image model, or Lantern's procedural generator. Default: the model
    /// when `GEMINI_API_KEY` is set, else local.
    public var generator: Generator
    /// Gemini (`GEMINI_API_KEY`, `GEMINI_BASE_URL`), when configured.
    public var gemini: (baseURL: String, apiKey: String)?
    /// The image model's id (`EVOLUTION_IMAGE_MODEL`).
    public var imageModel: String
    /// The whole wait for one picture (`EVOLUTION_MODEL_TIMEOUT_SECONDS`).
    public var modelTimeout: Duration
    /// The side of every stored picture, in pixels (`EVOLUTION_IMAGE_SIZE`).
    public var imageSize: Int
    /// `EVOLUTION_IMAGE_CALLS_PER_ACCOUNT`: image-model calls one account may cause in 30 days, retries included (0: no
    /// limit); beyond them its evolutions are drawn by Lantern's generator (`BudgetedPainter`).
    public var imageCallsPerAccount: Int
    /// Pictures drawn at once by one replica (`EVOLUTION_CONCURRENCY`).
    public var concurrency: Int
    /// How often due jobs are looked for (`EVOLUTION_INTERVAL_SECONDS`).
    public var interval: Duration
    /// Attempts before a job is dead-lettered, and the backoff between them (`EVOLUTION_MAX_ATTEMPTS`,
    /// `EVOLUTION_RETRY_BASE_SECONDS`, `EVOLUTION_RETRY_MAX_SECONDS`).
    public var retry: RetryPolicy

    public init(settings: Settings) throws {
        process = try ProcessSettings(serviceName: "evolution-worker", settings: settings, defaultPort: Self.defaultPort)
        databaseURL = try settings.requiredSecret("database.url")
        redisURL = try settings.secret("redis.url", default: "redis://127.0.0.1:6379/0")
        streamPrefix = settings.string("stream.prefix", default: "lantern")
        storage = try ObjectStorageSettings(settings: settings, scope: "symbi", defaultDirectory: "/var/lib/lantern/symbi", defaultPrefix: "evolutions/")
        if let key = try settings.secret("gemini.api.key") {
            gemini = (try settings.url("gemini.base.url", default: LLMConfiguration.geminiURL, schemes: ["https", "http"]).absoluteString, key)
        }
        switch settings.string("evolution.generator")?.lowercased() {
        case nil: generator = gemini == nil ? .local : .model
        case "local": generator = .local
        case "model":
            guard gemini != nil else { throw ConfigurationError(variable: "EVOLUTION_GENERATOR", message: "is model, but GEMINI_API_KEY is not set") }
            generator = .model
        case let other?:
            throw ConfigurationError(variable: "EVOLUTION_GENERATOR", message: "must be model or local, got '\(other)'")
        }
        imageModel = settings.string("evolution.image.model", default: Self.defaultImageModel)
        modelTimeout = try settings.duration("evolution.model.timeout.seconds", default: 90, range: 1...600)
        imageSize = try settings.int("evolution.image.size", default: 1024, range: 256...2048)
        imageCallsPerAccount = try settings.int("evolution.image.calls.per.account", default: 6, range: 0...1_000)
        concurrency = try settings.int("evolution.concurrency", default: 4, range: 1...256)
        interval = try settings.duration("evolution.interval.seconds", default: 1, range: 0.05...600)
        retry = RetryPolicy(maxAttempts: try settings.int("evolution.max.attempts", default: 12, range: 1...100),
                            retryBase: try settings.duration("evolution.retry.base.seconds", default: 15, range: 0.01...3600),
                            retryMax: try settings.duration("evolution.retry.max.seconds", default: 3600, range: 0.01...86_400))
    }
}
