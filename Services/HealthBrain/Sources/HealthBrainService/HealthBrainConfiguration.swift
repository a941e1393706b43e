import Foundation
import LanternContracts
import LanternCore
import LanternLLM
import LanternObjectStorage

/// Everything `health-brain` reads at start-up (see docs/configuration.md).
public struct HealthBrainConfiguration: ServiceConfiguration {
    /// The port when `HTTP_PORT` is not set (Services/services.tsv; a deployment test keeps them equal).
    public static let defaultPort = 8086

    public var process: ProcessSettings
    public var databaseURL: String
    public var redisURL: String
    public var streamPrefix: String
    public var identityURL: URL
    /// Where Symbi's evolution pictures are (`SYMBI_STORAGE`…): evolution-worker writes them, this serves them.
    public var storage: ObjectStorageSettings
    /// The LLM layer (`LLM_MODELS_SYMBI_BRAIN`, `GEMINI_API_KEY`…): the brain asks the first model of its list once.
    public var llm: LLMConfiguration
    /// Local hour at which each user's brain window opens (`BRAIN_HOUR`), and the window's length (`BRAIN_WINDOW_HOURS`).
    public var brainHour: Int
    public var brainWindow: Duration
    /// How often due brain runs are looked for (`BRAIN_INTERVAL_SECONDS`), and the model calls a pass may start
    /// (`BRAIN_CALLS_PER_PASS`): with one replica at a time, calls per second = calls per pass / interval, kept under
    /// the provider's rate limit.
    public var brainInterval: Duration
    public var brainCallsPerPass: Int
    /// Model calls in flight at once (`BRAIN_CONCURRENCY`).
    public var brainConcurrency: Int
    /// The whole wait for the model (`BRAIN_TIMEOUT_SECONDS`, Req 6.4: 10).
    public var brainTimeout: Duration
    /// How often raw values past their time are deleted (`PURGE_INTERVAL_SECONDS`); a row goes at most 24 hours
    /// after processing.
    public var purgeInterval: Duration

    public init(settings: Settings) throws {
        process = try ProcessSettings(serviceName: "health-brain", settings: settings, defaultPort: Self.defaultPort)
        databaseURL = try settings.requiredSecret("database.url")
        redisURL = try settings.secret("redis.url", default: "redis://127.0.0.1:6379/0")
        streamPrefix = settings.string("stream.prefix", default: "lantern")
        identityURL = try settings.url("identity.url", default: IdentityEndpoint.localURL, schemes: ["http", "https"])
        storage = try ObjectStorageSettings(settings: settings, scope: "symbi", defaultDirectory: "/var/lib/lantern/symbi", defaultPrefix: "evolutions/")
        var llm = try LLMConfiguration(settings: settings, tasks: [Brain.task])
        // One call a day: one attempt of one model; the spec's model when Gemini is configured and no list names one.
        llm.policy.attemptsPerModel = 1
        llm.policy.cacheEntries = 0
        let steps = llm.route(for: Brain.task)
        if let first = steps.first(where: { $0 != .local }) {
            llm.routes[Brain.task] = [first, .local]
        } else if llm.gemini != nil {
            llm.routes[Brain.task] = [.model(provider: "gemini", model: Brain.defaultGeminiModel), .local]
        } else {
            llm.routes[Brain.task] = [.local]
        }
        self.llm = llm
        brainHour = try settings.int("brain.hour", default: 20, range: 0...23)
        brainWindow = .seconds(try settings.int("brain.window.hours", default: 3, range: 0...24) * 3600)
        guard Double(brainHour) + brainWindow.inSeconds / 3600 <= 24 else {
            throw ConfigurationError(variable: "BRAIN_WINDOW_HOURS", message: "must end the window by midnight (BRAIN_HOUR + BRAIN_WINDOW_HOURS ≤ 24)")
        }
        brainInterval = try settings.duration("brain.interval.seconds", default: 1, range: 0.05...3600)
        brainCallsPerPass = try settings.int("brain.calls.per.pass", default: 10, range: 1...10_000)
        brainConcurrency = try settings.int("brain.concurrency", default: 16, range: 1...1_000)
        brainTimeout = try settings.duration("brain.timeout.seconds", default: 10, range: 0.1...60)
        purgeInterval = try settings.duration("purge.interval.seconds", default: 600, range: 0.05...3600)
    }
}

extension LLMConfiguration {
    /// The steps of `task`.
    func route(for task: String) -> [RouteStep] { routes[task] ?? defaultRoute }
}
