import Foundation
import HTTPTypes
import LanternCore
import HummingbirdTesting
import LanternContracts
import LanternTestSupport
import JWTKit
import LanternTokens
import NIOCore
import Testing

@Suite("Service tokens (client credentials)")
struct ServiceTokenTests {
    static let secrets = ["SERVICE_SECRETS": "content=content-secret-0123456789,gamification=gamification-secret-0123"]

    static func basic(_ service: String, _ secret: String) -> HTTPFields {
        [.authorization: "Basic " + Data("\(service):\(secret)".utf8).base64EncodedString()]
    }

    @Test("a service with its secret gets a token for /internal routes: sub service:<name>, audience internal")
    func issued() async throws {
        try await IdentityHarness.run(extra: Self.secrets) { h in
            let response = try await h.request(.post, IdentityEndpoint.serviceTokenPath, headers: Self.basic("content", "content-secret-0123456789"))
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let answer = try response.json(ServiceTokenResponse.self)
            #expect(answer.tokenType == "Bearer" && answer.expiresIn == 900)
            let jwks = try await h.request(.get, "/.well-known/jwks.json")
            let keys = JWTKeyCollection()
            try await keys.add(jwksJSON: String(buffer: jwks.body))
            let verifier = AccessTokenVerifier(clock: .manual(h.time)) { _ in keys }
            let claims = try await verifier.verify(answer.accessToken, audience: TokenAudience.service)
            #expect(claims.sub == "service:content")
            await #expect(throws: TokenError.self) { try await verifier.verify(answer.accessToken) }
        }
    }

    @Test("a wrong secret, an unknown service, another service's secret or no credentials: 401 invalid_client", arguments: [
        Optional(("content", "wrong-secret-0123456789")), ("push", "content-secret-0123456789"),
        ("gamification", "content-secret-0123456789"), nil,
    ] as [(String, String)?])
    func refused(credentials: (String, String)?) async throws {
        try await IdentityHarness.run(extra: Self.secrets) { h in
            let headers = credentials.map { Self.basic($0.0, $0.1) } ?? [:]
            let response = try await h.request(.post, IdentityEndpoint.serviceTokenPath, headers: headers)
            #expect(response.status == .unauthorized)
            #expect(try response.json(ProblemBody.self).code == "invalid_client")
        }
    }

    @Test("SERVICE_SECRETS that are malformed or too short stop the start naming the variable", arguments: ["content", "content=short", "Content=content-secret-0123456789"])
    func configuration(value: String) async throws {
        await #expect {
            try await IdentityHarness.run(extra: ["SERVICE_SECRETS": value]) { _ in }
        } throws: { ($0 as? ConfigurationError)?.variable == "SERVICE_SECRETS" }
    }
}
