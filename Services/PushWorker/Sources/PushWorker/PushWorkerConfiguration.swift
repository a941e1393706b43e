import Foundation
import LanternContracts
import LanternCore

/// Everything `push-worker` reads at start-up (see docs/configuration.md).
///
/// A provider is used only when its credentials are complete; otherwise that platform's notifications go to
/// the log provider, so the stack runs without Apple or Google accounts.
public struct PushWorkerConfiguration: ServiceConfiguration {
    /// The port when `HTTP_PORT` is not set (Services/services.tsv; a deployment test keeps them equal).
    public static let defaultPort = 8087

    public struct APNs: Sendable {
        /// The `.p8` signing key (PKCS#8 PEM) from the Apple developer account.
        public var privateKeyPEM: String
        public var keyID: String
        public var teamID: String
        public var baseURL: URL
        /// App → bundle id (`apns-topic`).
        public var topics: [String: String]
    }

    public struct FCM: Sendable {
        public var serviceAccount: ServiceAccount
        public var baseURL: URL
    }

    public var process: ProcessSettings
    public var databaseURL: String
    public var redisURL: String
    public var streamPrefix: String
    public var apns: APNs?
    public var fcm: FCM?
    /// PEM file of extra certificate authorities trusted for APNs/FCM/OAuth (a TLS-inspecting proxy, tests).
    public var trustRootsFile: String?
    /// Jobs read and sent per batch; with HTTP/2 their requests share one connection per provider.
    public var concurrency: Int
    /// Attempts per device before a notification is dead-lettered.
    public var maxAttempts: Int
    public var retryBase: Duration
    public var retryMax: Duration
    public var requestTimeout: Duration

    public init(settings: Settings) throws {
        process = try ProcessSettings(serviceName: "push-worker", settings: settings, defaultPort: Self.defaultPort)
        databaseURL = try settings.requiredSecret("database.url")
        redisURL = try settings.secret("redis.url", default: "redis://127.0.0.1:6379/0")
        streamPrefix = settings.string("stream.prefix", default: "lantern")
        trustRootsFile = settings.string("push.trust.roots.file")
        concurrency = try settings.int("push.concurrency", default: 512, range: 1...2048)
        maxAttempts = try settings.int("push.max.attempts", default: 6, range: 1...20)
        retryBase = try settings.duration("push.retry.base.seconds", default: 1, range: 0.01...60)
        retryMax = try settings.duration("push.retry.max.seconds", default: 600, range: 0.01...86_400)
        requestTimeout = try settings.duration("push.request.timeout.seconds", default: 10, range: 0.1...120)
        apns = try Self.apns(settings)
        fcm = try Self.fcm(settings)
    }

    static func apns(_ settings: Settings) throws -> APNs? {
        let file = settings.string("apns.key.file")
        let keyID = settings.string("apns.key.id")
        let teamID = settings.string("apns.team.id")
        let environment = settings.string("apns.environment", default: "production")
        let host: String
        switch environment {
        case "production": host = "https://api.push.apple.com"
        case "sandbox", "development": host = "https://api.sandbox.push.apple.com"
        default: throw ConfigurationError(variable: "APNS_ENVIRONMENT", message: "must be production or sandbox, got '\(environment)'")
        }
        let baseURL = try settings.url("apns.url", default: host, schemes: ["https"])
        var topics = Dictionary(uniqueKeysWithValues: AppID.allCases.map { ($0.rawValue, "app.lantern.\($0.rawValue)") })
        for item in settings.list("apns.topics") {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, AppID(rawValue: parts[0]) != nil, !parts[1].isEmpty else {
                throw ConfigurationError(variable: "APNS_TOPICS", message: "must be a list of app=bundle-id (apps: \(AppID.allCases.map(\.rawValue).joined(separator: ", "))), got '\(item)'")
            }
            topics[parts[0]] = parts[1]
        }
        let given = [file, keyID, teamID].compactMap { $0 }
        if given.isEmpty { return nil }
        guard let file, let keyID, let teamID else {
            throw ConfigurationError(variable: file == nil ? "APNS_KEY_FILE" : keyID == nil ? "APNS_KEY_ID" : "APNS_TEAM_ID",
                                     message: "is required when any of APNS_KEY_FILE, APNS_KEY_ID, APNS_TEAM_ID is set")
        }
        guard let pem = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw ConfigurationError(variable: "APNS_KEY_FILE", message: "cannot be read: '\(file)'")
        }
        guard (try? APNsTokenSigner(privateKeyPEM: pem, keyID: keyID, teamID: teamID)) != nil else {
            throw ConfigurationError(variable: "APNS_KEY_FILE", message: "must hold an ES256 (P-256) private key in PEM, as the .p8 file Apple issues")
        }
        return APNs(privateKeyPEM: pem, keyID: keyID, teamID: teamID, baseURL: baseURL, topics: topics)
    }

    static func fcm(_ settings: Settings) throws -> FCM? {
        let baseURL = try settings.url("fcm.url", default: "https://fcm.googleapis.com", schemes: ["https", "http"])
        guard let file = settings.string("fcm.service.account.file") else { return nil }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ConfigurationError(variable: "FCM_SERVICE_ACCOUNT_FILE", message: "cannot be read: '\(file)'")
        }
        do {
            return FCM(serviceAccount: try ServiceAccount(json: data), baseURL: baseURL)
        } catch {
            throw ConfigurationError(variable: "FCM_SERVICE_ACCOUNT_FILE", message: "must be a Google service account key (JSON): \(error)")
        }
    }
}
