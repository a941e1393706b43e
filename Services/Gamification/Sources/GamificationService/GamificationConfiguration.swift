import Foundation
import LanternContracts
import LanternCore

/// Everything `gamification` reads at start-up (see docs/configuration.md).
public struct GamificationConfiguration: ServiceConfiguration {
    /// The port when `HTTP_PORT` is not set (Services/services.tsv; a deployment test keeps them equal).
    public static let defaultPort = 8085

    public var process: ProcessSettings
    public var databaseURL: String
    public var redisURL: String
    public var streamPrefix: String
    public var identityURL: URL
    /// How often due streak reminders are looked for (`REMINDER_INTERVAL_SECONDS`).
    public var reminderInterval: Duration
    /// Activity events handled per transaction (`ACTIVITY_BATCH_SIZE`).
    public var activityBatchSize: Int

    public init(settings: Settings) throws {
        process = try ProcessSettings(serviceName: "gamification", settings: settings, defaultPort: Self.defaultPort)
        databaseURL = try settings.requiredSecret("database.url")
        redisURL = try settings.secret("redis.url", default: "redis://127.0.0.1:6379/0")
        streamPrefix = settings.string("stream.prefix", default: "lantern")
        identityURL = try settings.url("identity.url", default: IdentityEndpoint.localURL, schemes: ["http", "https"])
        reminderInterval = try settings.duration("reminder.interval.seconds", default: 30, range: 0.05...3600)
        activityBatchSize = try settings.int("activity.batch.size", default: 128, range: 1...1000)
    }
}
