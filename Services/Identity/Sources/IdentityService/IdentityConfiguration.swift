import Foundation
import LanternContracts
import LanternCore

/// Everything `identity` reads at start-up (see docs/configuration.md).
public struct IdentityConfiguration: ServiceConfiguration {
    /// The port when `HTTP_PORT` is not set (Services/services.tsv; a deployment test keeps them equal).
    public static let defaultPort = 8081

    public struct Provider: Sendable {
        public var keySetURL: String
        public var issuers: Set<String>
        public var audiences: Set<String>
    }

    public var process: ProcessSettings
    public var databaseURL: String
    public var redisURL: String
    public var streamPrefix: String
    /// Raw Ed25519 seed; when nil, a key is generated once and kept in the `identity.signing_keys` table.
    public var signingKey: Data?
    public var accessTokenLifetime: TimeInterval
    public var refreshTokenLifetime: TimeInterval
    public var deviceSignInApps: Set<AppID>
    /// nil when no client ids are configured: that sign-in method answers 503 `provider_not_configured`.
    public var google: Provider?
    public var apple: Provider?
    /// `SERVICE_SECRETS`: `content=<secret>,gamification=<secret>` — the services that may ask for a service token.
    public var serviceSecrets: [String: String]

    public init(settings: Settings) throws {
        process = try ProcessSettings(serviceName: "identity", settings: settings, defaultPort: Self.defaultPort)
        databaseURL = try settings.requiredSecret("database.url")
        redisURL = try settings.secret("redis.url", default: "redis://127.0.0.1:6379/0")
        streamPrefix = settings.string("stream.prefix", default: "lantern")
        if let text = try settings.secret("identity.signing.key") {
            guard let data = Data(base64Encoded: text), data.count == 32 else {
                throw ConfigurationError(variable: "IDENTITY_SIGNING_KEY", message: "must be 32 bytes in base64 (an Ed25519 seed), e.g. `openssl rand -base64 32`")
            }
            signingKey = data
        } else {
            signingKey = nil
        }
        accessTokenLifetime = try settings.seconds("access.token.ttl", default: 900, range: 60...86_400)
        refreshTokenLifetime = try settings.seconds("refresh.token.ttl", default: 60 * 86_400, range: 3_600...(365 * 86_400))
        let apps = settings.list("device.signin.apps")
        if apps.isEmpty {
            deviceSignInApps = [.luckyday, .astrosvitla, .roastmelater, .symbi]
        } else {
            deviceSignInApps = Set(try apps.map { name in
                guard let app = AppID(rawValue: name) else {
                    throw ConfigurationError(variable: "DEVICE_SIGNIN_APPS", message: "names an unknown app '\(name)' (\(AppID.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                return app
            })
        }
        var secrets: [String: String] = [:]
        for item in try settings.secretList("service.secrets") {
            guard let equals = item.firstIndex(of: "="), equals > item.startIndex else {
                throw ConfigurationError(variable: "SERVICE_SECRETS", message: "must be service=secret pairs separated by commas")
            }
            let name = String(item[..<equals]), secret = String(item[item.index(after: equals)...])
            guard name.allSatisfy({ $0.isLowercase || $0 == "-" }), secret.count >= 16 else {
                throw ConfigurationError(variable: "SERVICE_SECRETS", message: "needs a lowercase service name and a secret of at least 16 characters for '\(name)'")
            }
            secrets[name] = secret
        }
        serviceSecrets = secrets
        // Another key set makes another identity provider: development points these at the development provider
        // (`make up`, `make token`), tests at their fakes. Anywhere else they are Google's and Apple's own, so no
        // configuration can make a deployment believe tokens it did not get from them.
        let development = process.environment == .development
        func keySet(_ key: String, default url: String) throws -> String {
            guard settings.string(key) != nil else { return url }
            guard development else {
                throw ConfigurationError(variable: Settings.variableName(key),
                                         message: "may only be set with LANTERN_ENVIRONMENT=development (a deployment uses \(url))")
            }
            return try settings.url(key, schemes: ["https", "http"]).absoluteString
        }
        let googleAudiences = settings.list("google.client.ids")
        google = googleAudiences.isEmpty ? nil : Provider(
            keySetURL: try keySet("google.jwks.url", default: "https://www.googleapis.com/oauth2/v3/certs"),
            issuers: ["accounts.google.com", "https://accounts.google.com"],
            audiences: Set(googleAudiences))
        let appleAudiences = settings.list("apple.client.ids")
        apple = appleAudiences.isEmpty ? nil : Provider(
            keySetURL: try keySet("apple.jwks.url", default: "https://appleid.apple.com/auth/keys"),
            issuers: ["https://appleid.apple.com"],
            audiences: Set(appleAudiences))
    }
}
