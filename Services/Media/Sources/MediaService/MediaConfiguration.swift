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
    public var storage: Storage
    /// Largest accepted photo, in bytes (the spec's 500 KB).
    public var maxBytes: Int
    /// Largest accepted width × height (decompression-bomb guard).
    public var maxPixels: Int
    /// Most time one photo's checks may take (`MOMENT_PARSE_TIMEOUT`, seconds).
    public var parseTimeout: Duration

    /// A folder (one replica, or a volume all replicas share) or an S3-compatible bucket (any number of replicas).
    public enum Storage: Sendable {
        case directory(URL)
        case s3(S3Settings)
    }

    public struct S3Settings: Sendable {
        public var endpoint: URL
        public var bucket: String
        public var region: String
        public var accessKeyID: String
        public var secretAccessKey: String
        /// Prepended to every object key (`moments/`), so the bucket can hold other things.
        public var prefix: String
        public var addressing: S3Bucket.Addressing
    }

    public init(settings: Settings) throws {
        process = try ProcessSettings(serviceName: "media", settings: settings, defaultPort: Self.defaultPort)
        databaseURL = try settings.requiredSecret("database.url")
        redisURL = try settings.secret("redis.url", default: "redis://127.0.0.1:6379/0")
        streamPrefix = settings.string("stream.prefix", default: "lantern")
        identityURL = try settings.url("identity.url", default: IdentityEndpoint.localURL, schemes: ["http", "https"])
        switch settings.string("media.storage", default: "directory").lowercased() {
        case "directory":
            storage = .directory(URL(fileURLWithPath: settings.string("media.storage.dir", default: "/var/lib/lantern/media")))
        case "s3":
            let addressing = settings.string("media.s3.addressing", default: "path")
            guard let style = S3Bucket.Addressing(rawValue: addressing.lowercased()) else {
                throw ConfigurationError(variable: "MEDIA_S3_ADDRESSING", message: "must be path or virtual, got '\(addressing)'")
            }
            let bucket = try settings.requiredString("media.s3.bucket")
            guard (3...63).contains(bucket.count), bucket.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "-" || $0 == "." }) else {
                throw ConfigurationError(variable: "MEDIA_S3_BUCKET", message: "must be an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens), got '\(bucket)'")
            }
            storage = .s3(S3Settings(
                endpoint: try settings.url("media.s3.endpoint", schemes: ["https", "http"]), bucket: bucket,
                region: settings.string("media.s3.region", default: "us-east-1"),
                accessKeyID: try settings.requiredString("media.s3.access.key.id"),
                secretAccessKey: try settings.requiredSecret("media.s3.secret.access.key"),
                prefix: settings.string("media.s3.prefix", default: "moments/"), addressing: style))
        case let other:
            throw ConfigurationError(variable: "MEDIA_STORAGE", message: "must be directory or s3, got '\(other)'")
        }
        maxBytes = try settings.int("moment.max.bytes", default: 500 * 1024, range: 1024...(20 << 20))
        maxPixels = try settings.int("moment.max.pixels", default: 40_000_000, range: 1_000...400_000_000)
        parseTimeout = try settings.duration("moment.parse.timeout", default: 1, range: 0.01...30)
    }
}
