import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternRedis
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
            var builder = ServiceBuilder("keys-test", process: process, streamPrefix: TestEnvironment.uniquePrefix(), logger: TestEnvironment.logger)
            try builder.addRedis(url: TestEnvironment.redisURL)
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

    @Test("a deleted account's tokens are refused (AccountErased) by every verifier the moment identity marks it, other users' and service tokens are not")
    func erasedAccountsRefused() async throws {
        let identity = try await FakeIdentity()
        try await identity.serve { url in
            let prefix = TestEnvironment.uniquePrefix()
            var process = ProcessSettings(serviceName: "erased-test", host: "127.0.0.1", port: 0, logLevel: .warning)
            process.operationsPort = try OperationsPort().port
            var builder = ServiceBuilder("erased-test", process: process, streamPrefix: prefix, logger: TestEnvironment.logger)
            try builder.addRedis(url: try await TestEnvironment.redisURL(for: "media", prefix: prefix))
            let verifier = builder.addAccessTokens(identity: url)
            let erasures = try #require(builder.erasedAccounts)
            let application = builder.application(router: builder.makeRouter())
            try await withService(application) { () async throws -> Void in
                let deleted = UUID(), kept = UUID()
                let token = try await identity.token(user: deleted)
                #expect(try await verifier.verify(token).userID == deleted)
                // identity marks with its own Redis user; a service's may only ask.
                let identityRedis = RedisClient(endpoint: try RedisEndpoint(url: try await TestEnvironment.redisURL(for: "identity", prefix: prefix)), size: 1)
                try await ErasedAccounts(redis: identityRedis, streams: StreamNames(prefix: prefix), logger: TestEnvironment.logger)
                    .mark(deleted.lowercased, for: .seconds(60))
                await identityRedis.shutdown()
                await #expect(throws: AccountErased.self) { try await verifier.verify(token) }
                #expect(try await verifier.verify(try await identity.token(user: kept)).userID == kept)
                let service = try await identity.issuer.issueServiceToken(service: "content")
                #expect(try await verifier.verify(service, audience: TokenAudience.service).isService)
                await #expect(throws: (any Error).self) { try await erasures.mark(kept.lowercased, for: .seconds(60)) }
            }
        }
    }
}
