import Hummingbird
import LanternCore
import LanternTokens

/// Admits requests that carry a valid access token and records its claims in the context.
///
/// Services verify tokens themselves even behind the gateway (defence in depth). Internal routes also name their
/// callers: a service token of any other service is refused (403 `caller_not_allowed`).
public struct RequireAccessToken: RouterMiddleware {
    public typealias Context = LanternRequestContext
    let verifier: AccessTokenVerifier
    let audience: String
    let callers: Set<String>?

    /// - Parameter callers: for service tokens, the services allowed (`InternalRoute.callers`); nil admits any.
    public init(verifier: AccessTokenVerifier, audience: String = TokenAudience.app, callers: Set<String>? = nil) {
        self.verifier = verifier
        self.audience = audience
        self.callers = callers
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let claims = try await verifier.verify(try Self.bearerToken(request), audience: audience)
        if let callers {
            let caller = claims.isService ? String(claims.sub.dropFirst("service:".count)) : claims.sub
            guard claims.isService, callers.contains(caller) else {
                throw Problem.forbidden("\(claims.sub) may not call this route; its callers: \(callers.sorted().joined(separator: ", ")).",
                                        code: "caller_not_allowed")
            }
        }
        context.auth = claims
        if let sub = context.auth?.sub { context.logger[metadataKey: "user"] = .string(sub) }
        return try await next(request, context)
    }

    public static func bearerToken(_ request: Request) throws -> String {
        try bearerToken(authorization: request.headers[.authorization])
    }

    /// `<token>` of an `Authorization: Bearer <token>` field, or the 401 that says what is wrong with it.
    public static func bearerToken(authorization header: String?) throws -> String {
        guard let header else {
            throw TokenError("missing_token", "Send an access token: Authorization: Bearer <token>.")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty else {
            throw TokenError("invalid_token", "The Authorization header must be 'Bearer <token>'.")
        }
        return String(parts[1])
    }
}
