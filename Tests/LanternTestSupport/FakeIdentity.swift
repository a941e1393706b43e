import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternTokens
import NIOCore

/// Stands in for `identity` when testing another service: signs access tokens and serves their key set.
public struct FakeIdentity: Sendable {
    public let issuer: AccessTokenIssuer

    public init(clock: WallClock = .system) async throws {
        var generator = SystemRandomNumberGenerator()
        let seed = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        issuer = try await AccessTokenIssuer(privateKey: Data(seed), clock: clock)
    }

    public func token(user: UUID = UUID(), app: AppID = .pairly) async throws -> String {
        try await issuer.issue(userID: user, sessionID: UUID(), app: app).token
    }

    /// Serves `/.well-known/jwks.json` on loopback while `body` runs; passes the base URL.
    public func serve<T: Sendable>(_ body: @Sendable (URL) async throws -> T) async throws -> T {
        let router = Router()
        let jwks = try JSONEncoder().encode(issuer.jwks)
        router.get("/.well-known/jwks.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: jwks)))
        }
        return try await LoopbackServer.run(router: router) { port in try await body(URL(string: "http://127.0.0.1:\(port)")!) }
    }
}
