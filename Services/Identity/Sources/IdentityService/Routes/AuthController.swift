import Crypto
import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP
import LanternTokens

/// `/v1/auth/…` and `/.well-known/jwks.json`.
struct AuthController: Sendable {
    let accounts: AccountStore
    let sessions: SessionStore
    let keys: SigningKeys
    let google: ExternalIdentityVerifier?
    let apple: ExternalIdentityVerifier?
    let deviceSignInApps: Set<AppID>

    struct DeviceSignIn: Decodable {
        var deviceId: String
        var app: String
    }

    struct ProviderSignIn: Decodable {
        var idToken: String
        var app: String
        /// Apple sends the name to the app only on the first sign-in; the app forwards it.
        var displayName: String?
    }

    struct RefreshRequest: Decodable {
        var refreshToken: String
    }

    struct TokenResponse: Encodable, Sendable {
        var accessToken: String
        var tokenType = "Bearer"
        var expiresIn: Int
        var expiresAt: Date
        var refreshToken: String
        var user: User?
        var isNewUser: Bool?
    }

    /// `/v1/auth`: sign-in and refresh are public; signing out and linking an identity need the session's token.
    func endpoints(requireAuth: RequireAccessToken) -> RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.post("device", use: device)
        routes.post("google", use: googleSignIn)
        routes.post("apple", use: appleSignIn)
        routes.post("refresh", use: refresh)
        // The middleware applies to the routes added after it.
        routes.add(middleware: requireAuth)
        routes.post("logout", use: logout)
        routes.post("link/google", use: linkGoogle)
        routes.post("link/apple", use: linkApple)
        return routes
    }

    /// `/.well-known/jwks.json`: the public keys every service verifies access tokens with.
    var keySet: RouteCollection<LanternRequestContext> {
        RouteCollection(context: LanternRequestContext.self).get("jwks.json", use: jwks)
    }

    @Sendable func device(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<TokenResponse> {
        let body = try await request.decodeJSON(as: DeviceSignIn.self, context: context)
        var validator = FieldValidator()
        let app = AppID(rawValue: body.app)
        validator.check(app != nil, "app", "must be one of \(AppID.allCases.map(\.rawValue).joined(separator: ", "))")
        validator.check(DeviceSecret.isAcceptable(body.deviceId), "deviceId",
                        "must be a random id of at least 128 bits: a UUID v4, or 22–128 characters of [A-Za-z0-9_-]")
        try validator.validate()
        guard let app else { throw Problem.invalid(field: "app", "is not a known app") }
        guard deviceSignInApps.contains(app) else {
            throw Problem(status: 403, code: "sign_in_method_not_allowed", title: "Sign-in method not allowed",
                          detail: "\(app.rawValue) does not offer anonymous device accounts; sign in with Google or Apple.")
        }
        let (user, created) = try await accounts.findOrCreateUser(app: app, method: "device", subject: DeviceSecret.subject(body.deviceId),
                                                               displayName: nil, email: nil)
        return try await tokens(for: user, app: app, created: created)
    }

    @Sendable func googleSignIn(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<TokenResponse> {
        try await providerSignIn(request, context: context, method: "google", verifier: google)
    }

    @Sendable func appleSignIn(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<TokenResponse> {
        try await providerSignIn(request, context: context, method: "apple", verifier: apple)
    }

    private func providerSignIn(_ request: Request, context: LanternRequestContext, method: String,
                                verifier: ExternalIdentityVerifier?) async throws -> JSONResponse<TokenResponse> {
        let body = try await request.decodeJSON(as: ProviderSignIn.self, context: context)
        let (app, name) = try Self.validate(body)
        let identity = try await Self.configured(verifier, method).verify(body.idToken)
        let providerName = identity.name.flatMap { try? DisplayName.validate(String($0.prefix(40))).get() }
        let (user, created) = try await accounts.findOrCreateUser(app: app, method: method, subject: identity.subject,
                                                               displayName: name ?? providerName, email: identity.email)
        return try await tokens(for: user, app: app, created: created)
    }

    @Sendable func linkGoogle(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<User> {
        try await link(request, context: context, method: "google", verifier: google)
    }

    @Sendable func linkApple(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<User> {
        try await link(request, context: context, method: "apple", verifier: apple)
    }

    /// Adds the ID token's identity to the signed-in account and answers the account as `GET /v1/me` does. The body
    /// and its problems are sign-in's (`displayName` is checked but not used: linking leaves the profile's name).
    private func link(_ request: Request, context: LanternRequestContext, method: String,
                      verifier: ExternalIdentityVerifier?) async throws -> JSONResponse<User> {
        let claims = try context.requireAuth()
        guard let userID = claims.userID else { throw Problem.forbidden("This route is for user tokens.") }
        let body = try await request.decodeJSON(as: ProviderSignIn.self, context: context)
        let (app, _) = try Self.validate(body)
        guard app.rawValue == claims.app else {
            throw Problem.invalid(field: "app", "must be the app of this account (\(claims.app ?? "none"))")
        }
        let identity = try await Self.configured(verifier, method).verify(body.idToken)
        do {
            let (user, _) = try await accounts.link(userID: userID, method: method, subject: identity.subject, email: identity.email)
            return JSONResponse(user)
        } catch let failure as LinkFailure {
            switch failure {
            case .identityLinkedElsewhere: throw Problem.identityAlreadyLinked(method)
            case .providerAlreadyLinked: throw Problem.providerAlreadyLinked(method)
            case .accountDeleted: throw Problem.accountDeleted
            }
        }
    }

    /// The checks of a sign-in or link body: every bad field in one 422. Returns the app and the valid display name.
    private static func validate(_ body: ProviderSignIn) throws -> (AppID, displayName: String?) {
        var validator = FieldValidator()
        let app = AppID(rawValue: body.app)
        validator.check(app != nil, "app", "must be one of \(AppID.allCases.map(\.rawValue).joined(separator: ", "))")
        validator.check(!body.idToken.isEmpty && body.idToken.count <= 8192, "idToken", "must be a JWT of at most 8 KB")
        var name: String?
        if let displayName = body.displayName {
            switch DisplayName.validate(displayName) {
            case .success(let valid): name = valid
            case .failure(let message): validator.fail("displayName", message)
            }
        }
        try validator.validate()
        guard let app else { throw Problem.invalid(field: "app", "is not a known app") }
        return (app, name)
    }

    private static func configured(_ verifier: ExternalIdentityVerifier?, _ method: String) throws -> ExternalIdentityVerifier {
        guard let verifier else {
            throw Problem(status: 503, code: "provider_not_configured", title: "Sign-in method not configured",
                          detail: "\(method) sign-in is not configured on this server (\(method.uppercased())_CLIENT_IDS).")
        }
        return verifier
    }

    @Sendable func refresh(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<TokenResponse> {
        let body = try await request.decodeJSON(as: RefreshRequest.self, context: context)
        guard body.refreshToken.hasPrefix("lrt_"), body.refreshToken.count <= 128 else {
            throw Problem.unauthorized("The refresh token is not valid.", code: "invalid_refresh_token")
        }
        switch try await sessions.rotate(refreshToken: body.refreshToken) {
        case .rotated(let userID, let sessionID, let app, let next):
            let issuer = try await keys.issuer()
            let (token, expires) = try await issuer.issue(userID: userID, sessionID: sessionID, app: app)
            return JSONResponse(TokenResponse(accessToken: token, expiresIn: Int(issuer.lifetime), expiresAt: expires, refreshToken: next))
        case .unknown:
            throw Problem.unauthorized("The refresh token is not valid.", code: "invalid_refresh_token")
        case .expired:
            throw Problem.unauthorized("The refresh token has expired; sign in again.", code: "refresh_token_expired")
        case .revoked:
            throw Problem.unauthorized("This session has ended; sign in again.", code: "session_revoked")
        case .reused:
            throw Problem.unauthorized("This refresh token was already used; the session has been ended for safety. Sign in again.",
                                       code: "refresh_token_reused")
        }
    }

    @Sendable func logout(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let claims = try context.requireAuth()
        guard let userID = claims.userID, let sid = claims.sid.flatMap(UUID.init(uuidString:)) else {
            throw Problem.forbidden("Only user tokens can log out.")
        }
        try await sessions.revokeSession(sid, userID: userID, reason: "logout")
        return Response(status: .noContent)
    }

    @Sendable func jwks(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<PublicJWKS> {
        JSONResponse(try await keys.issuer().jwks, headers: [.cacheControl: "public, max-age=300"])
    }

    static func uuid(_ text: String) throws -> UUID {
        guard let id = UUID(uuidString: text) else { throw Problem.internalError(requestID: nil) }
        return id
    }

    private func tokens(for user: User, app: AppID, created: Bool) async throws -> JSONResponse<TokenResponse> {
        let (sessionID, refresh) = try await sessions.createSession(userID: try Self.uuid(user.id), app: app)
        let issuer = try await keys.issuer()
        let (token, expires) = try await issuer.issue(userID: try Self.uuid(user.id), sessionID: sessionID, app: app)
        return JSONResponse(TokenResponse(accessToken: token, expiresIn: Int(issuer.lifetime), expiresAt: expires,
                                          refreshToken: refresh, user: user, isNewUser: created),
                            status: created ? .created : .ok)
    }
}




