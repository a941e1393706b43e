import Hummingbird
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
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }

    /// JSON bodies are small; endpoints taking uploads collect with their own limit.
    public var maxUploadSize: Int { 64 * 1024 }

    /// The authenticated caller, or a 401 problem.
    public func requireAuth() throws -> AccessClaims {
        guard let auth else { throw TokenError("missing_token", "Send an access token: Authorization: Bearer <token>.") }
        return auth
    }
}
