import ContentKit
import Foundation
import LanternAppStore
import LanternContracts
import LanternCore
import LanternLLM

/// Everything `content` reads at start-up (see docs/configuration.md): what its apps share, then each app's own keys
/// (`ContentAppModule.configure`), so a bad value of any app stops the start naming its variable.
public struct ContentConfiguration: ServiceConfiguration {
    /// The port when `HTTP_PORT` is not set (Services/services.tsv; a deployment test keeps them equal).
    public static let defaultPort = 8084
    /// The LLM tasks of every app; each may have its own `LLM_MODELS_<TASK>`.
    public static var tasks: [String] { ContentApps.all.flatMap(\.llmTasks) }

    public var process: ProcessSettings
    public var databaseURL: String
    public var redisURL: String
    public var streamPrefix: String
    public var identityURL: URL
    public var astrologyURL: URL
    /// content's own secret for service tokens (identity's `SERVICE_SECRETS` names it); without it, profiles
    /// and charts cannot be computed (503).
    public var serviceSecret: String?
    public var llm: LLMConfiguration
    /// Which App Store signatures are trusted (`APPSTORE_*`).
    public var appStore: AppStoreConfiguration
    /// How often the apps' schedules (pre-generation, reminders, retries) are looked at.
    public var schedulerInterval: Duration
    /// Renders (report PDFs, share cards) per account and minute; 0 for no limit (`RenderLimit`).
    public var rendersPerAccountPerMinute: Int
    /// Each app of `ContentApps.all`, configured, ready to be built on the platform.
    var apps: [(module: ContentAppModule, build: @Sendable (ContentPlatform) throws -> any ContentApp)]

    public init(settings: Settings) throws {
        process = try ProcessSettings(serviceName: "content", settings: settings, defaultPort: Self.defaultPort)
        databaseURL = try settings.requiredSecret("database.url")
        redisURL = try settings.secret("redis.url", default: "redis://127.0.0.1:6379/0")
        streamPrefix = settings.string("stream.prefix", default: "lantern")
        identityURL = try settings.url("identity.url", default: IdentityEndpoint.localURL, schemes: ["http", "https"])
        astrologyURL = try settings.url("astrology.url", default: "http://127.0.0.1:8083", schemes: ["http", "https"])
        serviceSecret = try settings.secret("service.secret")
        llm = try LLMConfiguration(settings: settings, tasks: Self.tasks)
        schedulerInterval = try settings.duration("scheduler.interval.seconds", default: 5, range: 0.05...3600)
        appStore = try AppStoreConfiguration(settings: settings)
        rendersPerAccountPerMinute = try settings.int("renders.per.account.per.minute", default: 20, range: 0...100_000)
        apps = try ContentApps.all.map { ($0, try $0.configure(settings)) }
    }
}
