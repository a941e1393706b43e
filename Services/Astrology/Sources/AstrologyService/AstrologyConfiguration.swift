import Foundation
import LanternContracts
import LanternCore

/// Everything `astrology` reads at start-up (see docs/configuration.md).
public struct AstrologyConfiguration: ServiceConfiguration {
    /// The port when `HTTP_PORT` is not set (Services/services.tsv; a deployment test keeps them equal).
    public static let defaultPort = 8083

    public var process: ProcessSettings
    public var databaseURL: String
    /// The gazetteer TSV (scripts/gazetteer.py) loaded into an empty `astrology.places` at start; nil: no place search.
    public var placesFile: String?
    public var identityURL: URL
    /// Folder of the Swiss Ephemeris data files; without them the library computes with Moshier's theory.
    public var ephemerisPath: String
    /// Key of the chart fingerprint (HMAC-SHA256): fingerprints key purchases and reports, so keep it stable.
    public var fingerprintKey: String
    /// `REDIS_URL`, `STREAM_PREFIX`: astrology keeps nothing in Redis, but reads there which accounts were deleted
    /// (their tokens are refused everywhere at once) and, in development, the stack's shared clock (`make time-travel`).
    public var redisURL: String
    public var streamPrefix: String

    /// Used when `CHART_FINGERPRINT_KEY` is unset in development, so the stack runs out of the box.
    public static let developmentFingerprintKey = "lantern-development-chart-fingerprint-key"

    public init(settings: Settings) throws {
        process = try ProcessSettings(serviceName: "astrology", settings: settings, defaultPort: Self.defaultPort)
        databaseURL = try settings.requiredSecret("database.url")
        placesFile = settings.string("places.file")
        identityURL = try settings.url("identity.url", default: IdentityEndpoint.localURL, schemes: ["http", "https"])
        ephemerisPath = settings.string("swiss.ephemeris.path", default: "/usr/share/libswe/ephe")
        redisURL = try settings.secret("redis.url", default: "redis://127.0.0.1:6379/0")
        streamPrefix = settings.string("stream.prefix", default: "lantern")
        // Fingerprints key purchases and reports: a key everyone knows would let anyone link a chart to them, so
        // the built-in one is for development only.
        if let key = try settings.secret("chart.fingerprint.key") {
            fingerprintKey = key
        } else if process.environment == .development {
            fingerprintKey = Self.developmentFingerprintKey
        } else {
            throw ConfigurationError(variable: "CHART_FINGERPRINT_KEY",
                                     message: "is required outside development (LANTERN_ENVIRONMENT=development uses a built-in key), e.g. `openssl rand -base64 32`")
        }
        guard fingerprintKey.utf8.count >= 16 else {
            throw ConfigurationError(variable: "CHART_FINGERPRINT_KEY", message: "must be at least 16 bytes")
        }
    }
}
