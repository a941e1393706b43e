import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternTokens
import NIOCore

/// Stands in for `identity` when testing another service: signs access tokens and serves their key set.
public struct FakeIdentity: Sendable {
    public let issuer: AccessTokenIssuer
    private let seed: Data

    public init(clock: WallClock = .system) async throws {
        var generator = SystemRandomNumberGenerator()
        seed = Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
        issuer = try await AccessTokenIssuer(privateKey: seed, clock: clock)
    }

    /// A token signed with the same key an hour ago: expired for anyone verifying it now.
    public func expiredToken(user: UUID = UUID(), app: AppID = .pairly) async throws -> String {
        let past = try await AccessTokenIssuer(privateKey: seed, clock: WallClock { Date().addingTimeInterval(-3600) })
        return try await past.issue(userID: user, sessionID: UUID(), app: app).token
    }

    public func token(user: UUID = UUID(), app: AppID = .pairly) async throws -> String {
        try await issuer.issue(userID: user, sessionID: UUID(), app: app).token
    }

    /// A token of `session`, signed with the same key, that expires `seconds` from now (a socket outliving it).
    public func token(user: UUID = UUID(), session: UUID = UUID(), app: AppID = .pairly, expiresIn seconds: TimeInterval) async throws -> String {
        let short = try await AccessTokenIssuer(privateKey: seed, lifetime: seconds, clock: .system)
        return try await short.issue(userID: user, sessionID: session, app: app).token
    }

    /// The secret every service uses with this fake (`SERVICE_SECRET`).
    public static let serviceSecret = "fake-identity-service-secret"

    /// Serves `/.well-known/jwks.json` and the service-token route (any service name, `serviceSecret`) on loopback
    /// while `body` runs; passes the base URL.
    public func serve<T: Sendable>(_ body: @Sendable (URL) async throws -> T) async throws -> T {
        let router = Router()
        let jwks = try JSONEncoder().encode(issuer.jwks)
        router.get("/.well-known/jwks.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: jwks)))
        }
        let issuer = self.issuer
        router.post(RouterPath(IdentityEndpoint.serviceTokenPath)) { request, _ -> Response in
            guard let header = request.headers[.authorization], header.hasPrefix("Basic "),
                  let decoded = Data(base64Encoded: String(header.dropFirst(6))).flatMap({ String(data: $0, encoding: .utf8) }),
                  let colon = decoded.firstIndex(of: ":"), decoded[decoded.index(after: colon)...] == Self.serviceSecret else {
                return Response(status: .unauthorized, headers: [.contentType: "application/problem+json"],
                                body: .init(byteBuffer: ByteBuffer(string: #"{"status":401,"code":"invalid_client","title":"Unauthorized"}"#)))
            }
            let token = try await issuer.issueServiceToken(service: String(decoded[..<colon]))
            let answer = try JSONEncoder().encode(ServiceTokenResponse(accessToken: token, expiresIn: Int(issuer.lifetime)))
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: answer)))
        }
        return try await LoopbackServer.run(router: router) { port in try await body(URL(string: "http://127.0.0.1:\(port)")!) }
    }
}
