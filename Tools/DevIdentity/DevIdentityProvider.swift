import Crypto
import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP

/// The identity provider of the development stack (`make up`), as Firebase's Auth emulator is for Firebase: it
/// mints Google- and Apple-shaped ID tokens for made-up people, signed with its own key, and serves that key as
/// both providers' key sets. Identity is pointed at those key sets only when `LANTERN_ENVIRONMENT=development`
/// (IdentityConfiguration refuses them anywhere else), so a Pairly sign-in can be tried with no Google project.
///
/// Routes: `GET /` (a page to mint a token), `POST /token`, `GET /google/jwks.json`, `GET /apple/jwks.json`.
public struct DevIdentityProvider: Sendable {
    /// The audiences its tokens carry; `make up` gives identity these as `GOOGLE_CLIENT_IDS` and `APPLE_CLIENT_IDS`.
    public static let googleClientID = "lantern-dev.apps.googleusercontent.com"
    public static let appleClientID = "app.lantern.dev"

    public enum Provider: String, Codable, Sendable, CaseIterable {
        case google, apple

        var issuer: String { self == .google ? "https://accounts.google.com" : "https://appleid.apple.com" }
        var audience: String { self == .google ? DevIdentityProvider.googleClientID : DevIdentityProvider.appleClientID }
    }

    public struct TokenRequest: Codable, Sendable {
        public var provider: Provider?
        public var name: String
        public var email: String?
        public var app: String?

        public init(provider: Provider? = nil, name: String, email: String? = nil, app: String? = nil) {
            self.provider = provider
            self.name = name
            self.email = email
            self.app = app
        }
    }

    public struct TokenResponse: Codable, Sendable {
        public var provider: Provider
        public var idToken: String
        /// Stable for a name: the same made-up person is the same account every time.
        public var subject: String
        public var email: String
        public var name: String
        public var audience: String
        public var expiresAt: Date
        /// Where to exchange it for Lantern tokens (through the gateway), with the body to send.
        public var signIn: SignIn

        public struct SignIn: Codable, Sendable {
            public var path: String
            public var body: [String: String]
        }
    }

    let key: IDTokenKey
    let clock: WallClock

    public init(key: IDTokenKey, clock: WallClock = .system) {
        self.key = key
        self.clock = clock
    }

    /// The key kept in `file` (made there on first use, readable by its owner only).
    public static func key(file: URL) throws -> IDTokenKey {
        if let pem = try? String(contentsOf: file, encoding: .utf8) {
            return try IDTokenKey(pem: pem, kid: kid(pem))
        }
        let key = try IDTokenKey.generate()
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: file.path, contents: Data(key.privatePEM.utf8), attributes: [.posixPermissions: 0o600])
        return try IDTokenKey(pem: key.privatePEM, kid: kid(key.privatePEM))
    }

    /// A key id derived from the key, so it is the same across restarts.
    static func kid(_ pem: String) -> String {
        "dev-" + SHA256.hash(data: Data(pem.utf8)).prefix(6).map { String(format: "%02x", $0) }.joined()
    }

    /// Mints an ID token for `request`, valid for an hour.
    public func mint(_ request: TokenRequest) async throws -> TokenResponse {
        var validator = FieldValidator()
        let name = request.name.trimmingCharacters(in: .whitespacesAndNewlines)
        validator.check(!name.isEmpty && name.count <= 40, "name", "must be 1 to 40 characters")
        let app = request.app ?? AppID.pairly.rawValue
        validator.check(AppID(rawValue: app) != nil, "app", "must be one of \(AppID.allCases.map(\.rawValue).joined(separator: ", "))")
        if let email = request.email { validator.check(email.contains("@") && email.count <= 254, "email", "must be an email address") }
        try validator.validate()
        let provider = request.provider ?? .google
        let slug = name.lowercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) && $0.isASCII }.map(String.init).joined()
        let email = request.email ?? "\(slug.isEmpty ? "someone" : slug)@dev.lantern.test"
        let subject = "dev-" + SHA256.hash(data: Data("\(provider.rawValue):\(name.lowercased())".utf8)).prefix(10)
            .map { String(format: "%02x", $0) }.joined()
        let now = clock.now()
        let expires = now.addingTimeInterval(3600)
        var claims: [String: any Sendable] = [
            "iss": provider.issuer, "aud": provider.audience, "sub": subject, "email": email, "email_verified": true,
            "iat": Int(now.timeIntervalSince1970), "exp": Int(expires.timeIntervalSince1970),
        ]
        if provider == .google { claims["name"] = name }
        let token = try await key.sign(claims)
        return TokenResponse(provider: provider, idToken: token, subject: subject, email: email, name: name, audience: provider.audience,
                             expiresAt: expires, signIn: .init(path: "/v1/auth/\(provider.rawValue)",
                                                               body: ["idToken": token, "app": app, "displayName": name]))
    }

    /// The provider's routes, answering only requests addressed to `allowedHosts` (421 otherwise): a web page cannot
    /// reach it by DNS rebinding and mint tokens (issue #23 item 4).
    public func router(allowedHosts: AllowedHosts = .local) -> Router<LanternRequestContext> {
        let router = ServiceRouter.make()
        router.add(middleware: AllowedHostsMiddleware(allowedHosts))
        router.get("/") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                     body: .init(byteBuffer: ByteBuffer(string: DevIdentityPage.html)))
        }
        router.post("/token") { request, context in
            JSONResponse(try await mint(try await request.decodeJSON(as: TokenRequest.self, context: context)))
        }
        for provider in Provider.allCases {
            router.get("/\(provider.rawValue)/jwks.json") { _, _ in
                Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "public, max-age=300"],
                         body: .init(byteBuffer: ByteBuffer(bytes: try IDTokenKey.jwks([key]))))
            }
        }
        return router
    }

    /// `router(allowedHosts:)` for a provider listening on `host`: its loopback names, `host`, and `extra`
    /// (`ALLOWED_HOSTS`; an entry that is not a host name stops the start naming it).
    public func router(host: String, allowedHosts extra: [String]) throws -> Router<LanternRequestContext> {
        router(allowedHosts: try AllowedHosts(host: host, extra: extra))
    }
}
