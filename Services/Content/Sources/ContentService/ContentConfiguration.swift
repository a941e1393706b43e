import Foundation
import LanternAppStore
import LanternContracts
import LanternCore
import LanternLLM

/// Everything `content` reads at start-up (see docs/configuration.md).
public struct ContentConfiguration: ServiceConfiguration {
    /// The port when `HTTP_PORT` is not set (Services/services.tsv; a deployment test keeps them equal).
    public static let defaultPort = 8084
    /// The LLM tasks content runs; each may have its own `LLM_MODELS_<TASK>`.
    public static let tasks = ["fortune", "profile", "report"]

    public var process: ProcessSettings
    public var databaseURL: String
    public var redisURL: String
    public var streamPrefix: String
    public var identityURL: URL
    public var astrologyURL: URL
    /// content's own secret for service tokens (identity's `SERVICE_SECRETS` names it); without it, profiles
    /// cannot be computed (503).
    public var serviceSecret: String?
    public var llm: LLMConfiguration
    /// The whole time a live break may spend on a model before the hand-written fortune (Req 2.5: 5 s).
    public var fortuneBudget: Duration
    /// A profile's texts (nickname, poems, essence).
    public var profileBudget: Duration
    /// A fortune made ahead of time, with nobody waiting.
    public var pregenerationBudget: Duration
    /// AstroSvitla's App Store bundle id: transactions must be signed for it; product ids are `<it>.report.<area>`.
    public var astrosvitlaBundleId: String
    /// Which App Store signatures are trusted (`APPSTORE_*`).
    public var appStore: AppStoreConfiguration
    /// The time a report may spend on models before the local composition (FR-031: 10 s).
    public var reportBudget: Duration
    /// Local hours in which no "cookie ready" reminder is sent (it waits for their end).
    var quietHours: QuietHours
    /// How often the schedules (pre-generation, reminders) are looked at.
    public var schedulerInterval: Duration

    public init(settings: Settings) throws {
        process = try ProcessSettings(serviceName: "content", settings: settings, defaultPort: Self.defaultPort)
        databaseURL = try settings.requiredSecret("database.url")
        redisURL = try settings.secret("redis.url", default: "redis://127.0.0.1:6379/0")
        streamPrefix = settings.string("stream.prefix", default: "lantern")
        identityURL = try settings.url("identity.url", default: IdentityEndpoint.localURL, schemes: ["http", "https"])
        astrologyURL = try settings.url("astrology.url", default: "http://127.0.0.1:8083", schemes: ["http", "https"])
        serviceSecret = try settings.secret("service.secret")
        llm = try LLMConfiguration(settings: settings, tasks: Self.tasks)
        func duration(_ key: String, _ value: Double, _ range: ClosedRange<Double>) throws -> Duration {
            .milliseconds(Int64(try settings.seconds(key, default: value, range: range) * 1000))
        }
        fortuneBudget = try duration("fortune.budget.seconds", 5, 0.1...60)
        profileBudget = try duration("profile.budget.seconds", 8, 0.1...60)
        pregenerationBudget = try duration("pregeneration.budget.seconds", 30, 0.1...300)
        schedulerInterval = try duration("scheduler.interval.seconds", 5, 0.05...3600)
        reportBudget = try duration("report.budget.seconds", 10, 0.1...60)
        astrosvitlaBundleId = settings.string("astrosvitla.bundle.id", default: "app.lantern.astrosvitla")
        appStore = try AppStoreConfiguration(settings: settings)
        let quiet = settings.string("luckyday.quiet.hours", default: "22:00-08:00")
        guard let hours = QuietHours(quiet) else {
            throw ConfigurationError(variable: "LUCKYDAY_QUIET_HOURS", message: "must be HH:MM-HH:MM (local time), got '\(quiet)'")
        }
        quietHours = hours
    }
}
