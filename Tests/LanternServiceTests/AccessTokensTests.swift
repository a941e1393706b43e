import Foundation
import Hummingbird
import LanternCore
import LanternService
import LanternTestSupport
import LanternTokens
import NIOCore
import Synchronization
import Testing

@Suite("LanternService: app tokens checked against identity's key set, loaded as the process starts")
struct AccessTokensTests {
    @Test("identity_keys in /health/ready fails while identity's key set cannot be had and the preload keeps trying; once it has the set, readiness is ok and a token costs no fetch")
    func preloadAndReadiness() async throws {
        let identity = try await FakeIdentity()
        let jwks = try JSONEncoder().encode(identity.issuer.jwks)
        let down = Mutex(true)
        let fetches = Mutex(0)
        let keyServer = Router()
        keyServer.get("/.well-known/jwks.json") { _, _ -> Response in
            fetches.withLock { $0 += 1 }
            guard !down.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: jwks)))
        }
        try await LoopbackServer.run(router: keyServer) { port in
            let operations = try OperationsPort()
            var process = ProcessSettings(serviceName: "keys-test", host: "127.0.0.1", port: 0, logLevel: .warning)
            process.operationsPort = operations.port
            var builder = ServiceBuilder("keys-test", process: process, logger: TestEnvironment.logger)
            let verifier = builder.addAccessTokens(identity: try #require(URL(string: "http://127.0.0.1:\(port)")))
            let application = builder.application(router: builder.makeRouter())
            try await withService(application) { () async throws -> Void in
                // identity answers 503: the preload keeps trying (at most once a second), and readiness says why.
                #expect(try await eventually { try await operations.get("/health/ready").body.contains(#""identity_keys":"failing"#) })
                #expect(try await eventually { fetches.withLock { $0 } >= 2 })
                down.withLock { $0 = false }
                #expect(try await eventually { try await operations.get("/health/ready").status == 200 })
                let loaded = fetches.withLock { $0 }
                let user = UUID()
                #expect(try await verifier.verify(try await identity.token(user: user)).userID == user)
                #expect(fetches.withLock { $0 } == loaded, "the first token found the keys loaded")
            }
        }
    }
}
