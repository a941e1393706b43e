import AsyncHTTPClient
import Foundation
import JWTKit
import LanternCore
import LanternTestSupport
import LanternTokens
import Testing

/// Claims a `JWTKeyCollection` from the key set can verify (`AccessClaims` checks nothing but the signature itself).
private func claims(sub: String) -> [String: any Sendable] {
    let now = Int(Date().timeIntervalSince1970)
    return ["sub": sub, "iss": TokenAudience.issuer, "aud": TokenAudience.app, "iat": now, "exp": now + 600]
}

/// Runs `body` with an HTTP client that does not retry a refused connection: `HTTPClient.shared` keeps retrying
/// until the fetch's 5 s timeout, which would only make "the server is down" slow to observe.
private func withNoRetryClient<T>(_ body: (HTTPClient) async throws -> T) async throws -> T {
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.retryConnectionEstablishment = false
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    do {
        let result = try await body(client)
        try await client.shutdown()
        return result
    } catch {
        try? await client.shutdown()
        throw error
    }
}

@Suite("LanternTokens: RemoteKeySet over a loopback JWK set server")
struct RemoteKeySetTests {
    @Test("RemoteKeySet fetches once and caches, refetches at once for an unknown kid, but not more often than minRefreshInterval")
    func fetchCacheRefresh() async throws {
        let provider = FakeIdentityProvider()
        let a = try FakeIdentityProvider.makeKey(kid: "a"), b = try FakeIdentityProvider.makeKey(kid: "b")
        provider.publish([a])
        try await provider.serve { url in
            // No wall clock in the assertions: one key set whose interval cannot pass during the test, one whose
            // interval is zero.
            let patient = RemoteKeySet(url: url.absoluteString, httpClient: .shared, maxAge: .seconds(3600),
                                       minRefreshInterval: .seconds(3600), logger: TestEnvironment.logger)
            let keys = try await patient.keys(for: "a")
            #expect(provider.fetchCount.withLock { $0 } == 1)
            let signedByA = try await provider.idToken(key: a, claims: claims(sub: "by-a"))
            #expect(try await keys.verify(signedByA, as: AccessClaims.self).sub == "by-a")

            _ = try await patient.keys(for: "a")
            _ = try await patient.keys(for: nil)
            #expect(provider.fetchCount.withLock { $0 } == 1)

            // The issuer rotates; a token names the new kid right away: within minRefreshInterval no fetch happens,
            // and a flood of made-up kids costs no fetches either.
            provider.publish([a, b])
            #expect(await tokenErrorCode { try await patient.keys(for: "b") } == "unknown_key")
            for kid in ["x", "y", "z"] {
                #expect(await tokenErrorCode { try await patient.keys(for: kid) } == "unknown_key")
            }
            #expect(provider.fetchCount.withLock { $0 } == 1)

            // Once the interval has passed (here: none), the unknown kid is fetched at once, though the cache is far
            // from maxAge.
            let eager = RemoteKeySet(url: url.absoluteString, httpClient: .shared, maxAge: .seconds(3600),
                                     minRefreshInterval: .zero, logger: TestEnvironment.logger)
            provider.publish([a])
            _ = try await eager.keys(for: "a")
            #expect(provider.fetchCount.withLock { $0 } == 2)
            provider.publish([a, b])
            let rotated = try await eager.keys(for: "b")
            #expect(provider.fetchCount.withLock { $0 } == 3)
            let signedByB = try await provider.idToken(key: b, claims: claims(sub: "by-b"))
            #expect(try await rotated.verify(signedByB, as: AccessClaims.self).sub == "by-b")
        }
    }

    @Test("RemoteKeySet refetches a set older than maxAge and keeps serving cached keys while the server is down")
    func staleAndDown() async throws {
        let provider = FakeIdentityProvider()
        let a = try FakeIdentityProvider.makeKey(kid: "a")
        provider.publish([a])
        try await withNoRetryClient { http in
            let keySet = try await provider.serve { url in
                let keySet = RemoteKeySet(url: url.absoluteString, httpClient: http, maxAge: .milliseconds(200),
                                          minRefreshInterval: .milliseconds(50), logger: TestEnvironment.logger)
                _ = try await keySet.keys(for: "a")
                try await Task.sleep(for: .milliseconds(250))
                _ = try await keySet.keys(for: "a")
                #expect(provider.fetchCount.withLock { $0 } == 2)
                return keySet
            }
            // The server is gone and the set is stale: the refresh fails, the cached key still answers.
            try await Task.sleep(for: .milliseconds(250))
            let keys = try await keySet.keys(for: "a")
            let token = try await provider.idToken(key: a, claims: claims(sub: "cached"))
            #expect(try await keys.verify(token, as: AccessClaims.self).sub == "cached")
            #expect(provider.fetchCount.withLock { $0 } == 2)
        }
    }

    @Test("RemoteKeySet throws KeySetUnavailable when the key server is down or does not answer 200 (no patience: one try)")
    func unavailable() async throws {
        let provider = FakeIdentityProvider()
        provider.publish([try FakeIdentityProvider.makeKey(kid: "a")])
        try await provider.serve { url in
            let missing = url.deletingLastPathComponent().appendingPathComponent("no-such-certs")
            let keySet = RemoteKeySet(url: missing.absoluteString, httpClient: .shared, patience: .zero, logger: TestEnvironment.logger)
            let error = await #expect(throws: KeySetUnavailable.self) { try await keySet.keys(for: "a") }
            #expect(error?.reason.contains("404") == true)
        }
        let stopped = try await provider.serve { url in url }  // the server has stopped when this returns
        try await withNoRetryClient { http in
            let keySet = RemoteKeySet(url: stopped.absoluteString, httpClient: http, patience: .zero, logger: TestEnvironment.logger)
            await #expect(throws: KeySetUnavailable.self) { try await keySet.keys(for: nil) }
            await #expect(throws: KeySetUnavailable.self) { try await keySet.keys(for: "a") }
        }
        #expect(provider.fetchCount.withLock { $0 } == 0)
    }

    @Test("until a first set is loaded, a failed fetch is tried again within the request, one fetch at a time however many callers wait")
    func firstLoadRetried() async throws {
        let provider = FakeIdentityProvider()
        provider.publish([try FakeIdentityProvider.makeKey(kid: "a")])
        provider.failures.withLock { $0 = 2 }
        try await provider.serve { url in
            let keySet = RemoteKeySet(url: url.absoluteString, httpClient: .shared, minRefreshInterval: .milliseconds(100),
                                      patience: .seconds(60), logger: TestEnvironment.logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 { group.addTask { _ = try await keySet.keys(for: "a") } }
                try await group.waitForAll()
            }
            #expect(provider.fetchCount.withLock { $0 } == 3, "two failures, then the set: one fetch each")
        }
    }

    @Test("past its patience a caller gets KeySetUnavailable after trying again; preload() goes on until the set is loaded")
    func patienceAndPreload() async throws {
        let provider = FakeIdentityProvider()
        provider.publish([try FakeIdentityProvider.makeKey(kid: "a")])
        provider.failures.withLock { $0 = 1_000_000 }
        try await provider.serve { url in
            let keySet = RemoteKeySet(url: url.absoluteString, httpClient: .shared, minRefreshInterval: .milliseconds(50),
                                      patience: .seconds(2), logger: TestEnvironment.logger)
            await #expect(throws: KeySetUnavailable.self) { try await keySet.keys(for: "a") }
            #expect(provider.fetchCount.withLock { $0 } >= 2, "tried again within its patience")
            #expect(!(await keySet.isLoaded))

            provider.failures.withLock { $0 = 3 }
            let before = provider.fetchCount.withLock { $0 }
            await keySet.preload()
            #expect(await keySet.isLoaded)
            #expect(provider.fetchCount.withLock { $0 } == before + 4)
            _ = try await keySet.keys(for: "a")
            #expect(provider.fetchCount.withLock { $0 } == before + 4, "no fetch once loaded")
        }
    }

    @Test("a verifier over identity's published Ed25519 key set accepts identity's tokens and refuses another issuer's")
    func verifierOverPublishedKeys() async throws {
        let identity = try await FakeIdentity()
        try await identity.serve { base in
            let keySet = RemoteKeySet(url: base.appendingPathComponent(".well-known/jwks.json").absoluteString, httpClient: .shared,
                                      logger: TestEnvironment.logger)
            let verifier = AccessTokenVerifier(keySet: keySet, clock: .system)
            let user = UUID()
            #expect(try await verifier.verify(try await identity.token(user: user)).userID == user)
            let stranger = try await FakeIdentity().token(user: user)
            #expect(await tokenErrorCode { try await verifier.verify(stranger) } == "unknown_key")
        }
    }
}
