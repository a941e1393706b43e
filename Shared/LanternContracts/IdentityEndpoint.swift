/// Where `identity` is, and what it answers other services.
public enum IdentityEndpoint {
    /// `IDENTITY_URL`'s default: identity on a developer's machine (its port in Services/services.tsv; a test
    /// keeps the two equal).
    public static let localURL = "http://127.0.0.1:8081"

    /// `POST` here with HTTP Basic credentials `<service>:<its SERVICE_SECRET>` (OAuth 2.0 client credentials,
    /// `client_secret_basic`) for a service token: `sub` `service:<service>`, audience `internal`, for other
    /// services' `/internal/…` routes.
    public static let serviceTokenPath = "/internal/auth/service-token"
}

/// The answer of `IdentityEndpoint.serviceTokenPath`.
public struct ServiceTokenResponse: Codable, Sendable {
    public var accessToken: String
    public var tokenType: String
    public var expiresIn: Int
    public init(accessToken: String, expiresIn: Int) {
        self.accessToken = accessToken
        self.tokenType = "Bearer"
        self.expiresIn = expiresIn
    }
}
