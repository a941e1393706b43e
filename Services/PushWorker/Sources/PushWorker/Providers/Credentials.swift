import AsyncHTTPClient
import Foundation
import JWTKit
import LanternCore
import NIOCore
import NIOFoundationCompat

/// The APNs provider token: an ES256 JWT (`kid` = key id, `iss` = team id, `iat`) signed with the `.p8` key.
///
/// Apple rejects tokens older than an hour and throttles refreshes more often than every 20 minutes
/// (`TooManyProviderTokenUpdates`), so one token is shared by every request and replaced after 50 minutes.
public actor APNsTokenSigner {
    struct Claims: JWTPayload {
        var iss: String
        var iat: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    static let lifetime: TimeInterval = 50 * 60
    private let keys = JWTKeyCollection()
    private let keyID: String
    private let teamID: String
    private let clock: WallClock
    private let key: ES256PrivateKey
    private var keyAdded = false
    private var current: (token: String, issuedAt: Date)?

    public init(privateKeyPEM: String, keyID: String, teamID: String, clock: WallClock = .system) throws {
        self.key = try ES256PrivateKey(pem: privateKeyPEM)
        self.keyID = keyID
        self.teamID = teamID
        self.clock = clock
    }

    /// The current token, signing a new one when it is 50 minutes old.
    public func token() async throws -> String {
        let now = clock.now()
        if let current, now.timeIntervalSince(current.issuedAt) < Self.lifetime, now >= current.issuedAt { return current.token }
        if !keyAdded {
            await keys.add(ecdsa: key, kid: JWKIdentifier(string: keyID))
            keyAdded = true
        }
        let token = try await keys.sign(Claims(iss: teamID, iat: Int(now.timeIntervalSince1970)), kid: JWKIdentifier(string: keyID))
        current = (token, now)
        return token
    }

    /// Drops `token` after APNs answered `ExpiredProviderToken`, so the next call signs a fresh one.
    public func invalidate(_ token: String) {
        if current?.token == token { current = nil }
    }
}

/// A Google service account key file (the JSON the Firebase console downloads).
public struct ServiceAccount: Sendable {
    public var projectID: String
    public var clientEmail: String
    public var privateKeyID: String?
    public var tokenURI: URL
    let privateKey: Insecure.RSA.PrivateKey

    struct File: Decodable {
        var type: String?
        var project_id: String
        var private_key_id: String?
        var private_key: String
        var client_email: String
        var token_uri: String?
    }

    public init(json: Data) throws {
        let file = try JSONDecoder().decode(File.self, from: json)
        if let type = file.type, type != "service_account" {
            throw ConfigurationError(variable: "FCM_SERVICE_ACCOUNT_FILE", message: "has type '\(type)', expected service_account")
        }
        guard let uri = URL(string: file.token_uri ?? "https://oauth2.googleapis.com/token"), uri.scheme != nil, uri.host != nil else {
            throw ConfigurationError(variable: "FCM_SERVICE_ACCOUNT_FILE", message: "has an invalid token_uri")
        }
        projectID = file.project_id
        clientEmail = file.client_email
        privateKeyID = file.private_key_id
        tokenURI = uri
        privateKey = try Insecure.RSA.PrivateKey(pem: file.private_key)
    }
}

/// OAuth 2.0 access tokens for a service account: a signed RS256 JWT exchanged at `token_uri`
/// (JWT bearer grant, RFC 7523), cached until a minute before it expires; concurrent callers share one exchange.
public struct GoogleAccessTokens: Sendable {
    public static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"

    struct Assertion: JWTPayload {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int
        var exp: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    struct TokenResponse: Decodable {
        var access_token: String
        var expires_in: Int?
        var token_type: String?
    }

    public struct ExchangeFailed: Error, CustomStringConvertible {
        public var status: Int
        public var body: String
        public var description: String { "OAuth token exchange failed: HTTP \(status): \(body.prefix(300))" }
    }

    private let cache: TokenCache

    public init(account: ServiceAccount, httpClient: HTTPClient, clock: WallClock = .system, timeout: Duration = .seconds(10)) {
        let keys = JWTKeyCollection()
        cache = TokenCache(clock: clock) {
            try await Self.exchange(account: account, keys: keys, httpClient: httpClient, clock: clock, timeout: timeout)
        }
    }

    public func token() async throws -> String { try await cache.token() }

    /// Forgets `token` after the API answered 401, so the next call exchanges a new one.
    public func invalidate(_ token: String) async { await cache.invalidate(token) }

    private static func exchange(account: ServiceAccount, keys: JWTKeyCollection, httpClient: HTTPClient, clock: WallClock,
                                 timeout: Duration) async throws -> (token: String, expiresAt: Date) {
        await keys.add(rsa: account.privateKey, digestAlgorithm: .sha256, kid: account.privateKeyID.map { JWKIdentifier(string: $0) })
        let now = clock.now()
        let iat = Int(now.timeIntervalSince1970)
        let assertion = try await keys.sign(Assertion(iss: account.clientEmail, scope: Self.messagingScope, aud: account.tokenURI.absoluteString,
                                                      iat: iat, exp: iat + 3600),
                                            kid: account.privateKeyID.map { JWKIdentifier(string: $0) })
        var request = HTTPClientRequest(url: account.tokenURI.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        let form = "grant_type=\(Self.formEncode("urn:ietf:params:oauth:grant-type:jwt-bearer"))&assertion=\(Self.formEncode(assertion))"
        request.body = .bytes(ByteBuffer(string: form))
        let response = try await httpClient.execute(request, timeout: .milliseconds(timeout.milliseconds))
        let body = try await response.body.collect(upTo: 64 * 1024)
        guard response.status == .ok else { throw ExchangeFailed(status: Int(response.status.code), body: String(buffer: body)) }
        let decoded = try JSONDecoder().decode(TokenResponse.self, from: body)
        return (decoded.access_token, now.addingTimeInterval(TimeInterval(decoded.expires_in ?? 3600)))
    }

    static func formEncode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
