import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternTokens
import Logging
import NIOCore

/// The request context of every Lantern HTTP server.
public struct LanternRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// `X-Request-Id` of this request (the caller's, or one made at the edge).
    public var requestID: String = ""
    /// Set by `RequireAccessToken` once the bearer token checked out.
    public var auth: AccessClaims?
    /// Set by `RequireOperatorKey`: the operator an operator API's request comes from (its audit trail's "who").
    public var operatorName: String?
    public let remoteAddress: SocketAddress?
    /// The event loop of the client's connection: work for this request done there needs no hop between threads.
    public let eventLoop: any EventLoop

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.eventLoop = source.channel.eventLoop
    }

    /// JSON bodies are small; endpoints taking uploads collect with their own limit.
    public var maxUploadSize: Int { 64 * 1024 }

    /// The authenticated caller, or a 401 problem.
    public func requireAuth() throws -> AccessClaims {
        guard let auth else { throw TokenError("missing_token", "Send an access token: Authorization: Bearer <token>.") }
        return auth
    }

    /// The signed-in user of `app`: 401 without a valid token, `refusal` (a 403 naming the feature) for an account
    /// of another app, 403 for a service token.
    public func requireUser(of app: AppID, otherwise refusal: @autoclosure () -> Problem) throws -> UUID {
        let claims = try requireAuth()
        guard claims.app == app.rawValue else { throw refusal() }
        guard let id = claims.userID else { throw Problem.forbidden("This route is for user tokens.") }
        return id
    }
}
