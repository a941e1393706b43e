import Foundation
import LanternContracts
import LanternCore
import LanternObjectStorage

/// Everything `media` reads at start-up (see docs/configuration.md).
public struct MediaConfiguration: ServiceConfiguration {
    /// The port when `HTTP_PORT` is not set (Services/services.tsv; a deployment test keeps them equal).
    public static let defaultPort = 8082

    public var process: ProcessSettings
    public var databaseURL: String
    public var redisURL: String
    public var streamPrefix: String
    public var identityURL: URL
    /// Where photos are kept (`MEDIA_STORAGE`).
    public var storage: ObjectStorageSettings
    /// Largest accepted photo, in bytes (the spec's 500 KB).
    public var maxBytes: Int
    /// Largest accepted width × height (decompression-bomb guard).
    public var maxPixels: Int
    /// Most time one photo's checks may take (`MOMENT_PARSE_TIMEOUT`, seconds).
    public var parseTimeout: Duration

    public init(settings: Settings) throws {
        process = try ProcessSettings(serviceName: "media", settings: settings, defaultPort: Self.defaultPort)
        databaseURL = try settings.requiredSecret("database.url")
        redisURL = try settings.secret("redis.url", default: "redis://127.0.0.1:6379/0")
        streamPrefix = settings.string("stream.prefix", default: "lantern")
        identityURL = try settings.url("identity.url", default: IdentityEndpoint.localURL, schemes: ["http", "https"])
        storage = try ObjectStorageSettings(settings: settings, scope: "media", defaultDirectory: "/var/lib/lantern/media", defaultPrefix: "moments/")
        maxBytes = try settings.int("moment.max.bytes", default: 500 * 1024, range: 1024...(20 << 20))
        maxPixels = try settings.int("moment.max.pixels", default: 40_000_000, range: 1_000...400_000_000)
        parseTimeout = try settings.duration("moment.parse.timeout", default: 1, range: 0.01...30)
    }
}
