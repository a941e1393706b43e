import Foundation
import JWTKit
import LanternContracts
import LanternCore
import LanternTestSupport
import LanternTokens
import Synchronization
import Testing

/// A whole second, so `iat`/`exp` (whole seconds) line up exactly with the manual clock.
let start = Date(timeIntervalSince1970: 1_700_000_000)

func randomSeed() -> Data { Data((0..<32).map { _ in UInt8.random(in: 0...255) }) }

/// The code of the `TokenError` `body` throws (nil when it throws nothing or something else).
func tokenErrorCode(_ body: () async throws -> some Any) async -> String? {
    do {
        _ = try await body()
        return nil
    } catch let error as TokenError {
        return error.code
    } catch {
        return "not a TokenError: \(error)"
    }
}

@Suite("LanternTokens: issuing and verifying access tokens")
struct AccessTokenTests {
    @Test("an issued access token verifies and carries the user, session, app, issuer, audience and lifetime")
    func roundTrip() async throws {
        let time = ManualTime(start)
        let issuer = try await AccessTokenIssuer(privateKey: randomSeed(), clock: .manual(time))
        let user = UUID(), session = UUID()
        let (token, expiresAt) = try await issuer.issue(userID: user, sessionID: session, app: .astrosvitla)
        #expect(expiresAt == start.addingTimeInterval(900))

        let claims = try await issuer.localVerifier().verify(token)
        #expect(claims.userID == user)
        #expect(claims.sub == user.lowercased)
        #expect(claims.sid == session.lowercased)
        #expect(claims.app == AppID.astrosvitla.rawValue)
        #expect(claims.iss == TokenAudience.issuer)
        #expect(claims.aud == TokenAudience.app)
        #expect(claims.iat == 1_700_000_000)
        #expect(claims.exp == 1_700_000_900)
        #expect(!claims.isService)

        let header = try JWTHeaderFields.parse(token)
        #expect(header.alg == "EdDSA")
        #expect(header.kid == issuer.kid)
        #expect(issuer.jwks.keys.map(\.kid) == [issuer.kid])
    }

    @Test("a service token verifies only for the internal audience and names the service")
    func serviceToken() async throws {
        let issuer = try await AccessTokenIssuer(privateKey: randomSeed(), clock: .system)
        let verifier = await issuer.localVerifier()
        let token = try await issuer.issueServiceToken(service: "media")
        let claims = try await verifier.verify(token, audience: TokenAudience.service)
        #expect(claims.sub == "service:media")
        #expect(claims.isService)
        #expect(claims.userID == nil)
        #expect(await tokenErrorCode { try await verifier.verify(token) } == "invalid_token")
    }

    @Test("a token is accepted up to lifetime plus leeway and refused with token_expired after it, cached or not")
    func expiry() async throws {
        let time = ManualTime(start)
        let issuer = try await AccessTokenIssuer(privateKey: randomSeed(), lifetime: 900, clock: .manual(time))
        let verifier = await issuer.localVerifier(leeway: 30)
        let token = try await issuer.issue(userID: UUID(), sessionID: UUID(), app: .pairly).token
        _ = try await verifier.verify(token)  // remembered from now on

        time.advance(by: 900 + 30)  // the last accepted second
        _ = try await verifier.verify(token)

        time.advance(by: 1)
        #expect(await tokenErrorCode { try await verifier.verify(token) } == "token_expired")
        let fresh = await issuer.localVerifier(leeway: 30)  // has never seen the token
        #expect(await tokenErrorCode { try await fresh.verify(token) } == "token_expired")
    }

    @Test("a token issued further in the future than the leeway is refused with invalid_token")
    func issuedInFuture() async throws {
        let time = ManualTime(start)
        let issuer = try await AccessTokenIssuer(privateKey: randomSeed(), clock: .manual(time))
        let token = try await issuer.issue(userID: UUID(), sessionID: UUID(), app: .pairly).token
        let verifier = await issuer.localVerifier(leeway: 30)
        time.set(start.addingTimeInterval(-31))
        #expect(await tokenErrorCode { try await verifier.verify(token) } == "invalid_token")
        time.set(start.addingTimeInterval(-30))
        _ = try await verifier.verify(token)
    }

    @Test("a token for another audience is refused with invalid_token, even after it verified for its own")
    func otherAudience() async throws {
        let issuer = try await AccessTokenIssuer(privateKey: randomSeed(), clock: .system)
        let verifier = await issuer.localVerifier()
        let token = try await issuer.issue(userID: UUID(), sessionID: UUID(), app: .pairly).token
        #expect(await tokenErrorCode { try await verifier.verify(token, audience: TokenAudience.service) } == "invalid_token")
        _ = try await verifier.verify(token, audience: TokenAudience.app)  // now cached for its own audience
        #expect(await tokenErrorCode { try await verifier.verify(token, audience: TokenAudience.service) } == "invalid_token")
        #expect(await tokenErrorCode { try await verifier.verify(token, audience: "gateway") } == "invalid_token")
    }

    @Test("tokens with alg none or HS256 (keyed with the issuer's public key) are refused with invalid_token before any key lookup")
    func algorithmPinned() async throws {
        let issuer = try await AccessTokenIssuer(privateKey: randomSeed(), clock: .system)
        let real = await issuer.localVerifier()
        let lookups = Mutex(0)
        let verifier = AccessTokenVerifier(clock: .system) { kid in
            lookups.withLock { $0 += 1 }
            return try await real.keyCollection(for: kid)
        }
        let now = Int(Date().timeIntervalSince1970)
        let claims: [String: any Sendable] = ["sub": UUID().lowercased, "sid": UUID().lowercased, "app": "pairly",
                                              "iss": TokenAudience.issuer, "aud": TokenAudience.app, "iat": now, "exp": now + 900]
        let none = try FakeIdentityProvider.unsignedToken(claims: claims)
        #expect(await tokenErrorCode { try await verifier.verify(none) } == "invalid_token")

        // Algorithm confusion: an HMAC whose secret is the issuer's (public) Ed25519 key, under the issuer's kid.
        let jwk = try #require(issuer.jwks.keys.first)
        let publicKey = try #require(Base64URL.decode(jwk.x))
        let hmacKeys = JWTKeyCollection()
        await hmacKeys.add(hmac: HMACKey(from: publicKey), digestAlgorithm: .sha256, kid: JWKIdentifier(string: issuer.kid))
        let forged = AccessClaims(sub: UUID().lowercased, sid: UUID().lowercased, app: "pairly", iss: TokenAudience.issuer,
                                  aud: TokenAudience.app, issuedAt: Date(), expiresAt: Date().addingTimeInterval(900))
        let hs256 = try await hmacKeys.sign(forged, kid: JWKIdentifier(string: issuer.kid))
        #expect(try JWTHeaderFields.parse(hs256).alg == "HS256")
        #expect(await tokenErrorCode { try await verifier.verify(hs256) } == "invalid_token")
        #expect(lookups.withLock { $0 } == 0)

        // The counter does count: a genuine token looks its key up.
        _ = try await verifier.verify(try await issuer.issue(userID: UUID(), sessionID: UUID(), app: .pairly).token)
        #expect(lookups.withLock { $0 } == 1)
    }

    @Test("a token signed by another key under the issuer's kid, or with an altered payload, is refused with invalid_token")
    func badSignature() async throws {
        let issuer = try await AccessTokenIssuer(privateKey: randomSeed(), clock: .system)
        let verifier = await issuer.localVerifier()
        let claims = AccessClaims(sub: UUID().lowercased, sid: UUID().lowercased, app: "pairly", iss: TokenAudience.issuer,
                                  aud: TokenAudience.app, issuedAt: Date(), expiresAt: Date().addingTimeInterval(900))
        let impostor = JWTKeyCollection()
        await impostor.add(eddsa: try EdDSA.PrivateKey(), kid: JWKIdentifier(string: issuer.kid))
        let forged = try await impostor.sign(claims, kid: JWKIdentifier(string: issuer.kid))
        #expect(await tokenErrorCode { try await verifier.verify(forged) } == "invalid_token")

        let genuine = try await issuer.issue(userID: UUID(), sessionID: UUID(), app: .pairly).token
        let parts = genuine.split(separator: ".").map(String.init)
        let payloadData = try #require(Base64URL.decode(parts[1]))
        let decoded = try JSONSerialization.jsonObject(with: payloadData)
        var payload = try #require(decoded as? [String: Any])
        payload["sub"] = UUID().lowercased
        let altered = parts[0] + "." + Base64URL.encode(try JSONSerialization.data(withJSONObject: payload)) + "." + parts[2]
        #expect(await tokenErrorCode { try await verifier.verify(altered) } == "invalid_token")

        #expect(await tokenErrorCode { try await verifier.verify("not-a-jwt") } == "malformed_token")
        let other = try await AccessTokenIssuer(privateKey: randomSeed(), clock: .system)
        let foreign = try await other.issue(userID: UUID(), sessionID: UUID(), app: .pairly).token
        #expect(await tokenErrorCode { try await verifier.verify(foreign) } == "unknown_key")
    }
}

@Suite("LanternTokens: Base64URL")
struct Base64URLTests {
    @Test("Base64URL round-trips any bytes and writes no padding, '+' or '/'")
    func roundTrip() {
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(Base64URL.encode(Array("lantern".utf8)) == "bGFudGVybg")
        #expect(Base64URL.decode("-_8") == Data([0xfb, 0xff]))
        #expect(Base64URL.decode("bGFudGVybg") == Data("lantern".utf8))
        for length in 0..<64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255) } + [0xfb, 0xff, 0xfe]
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"), "\(bytes)")
            #expect(Base64URL.decode(text) == Data(bytes))
        }
        #expect(Base64URL.decode("not*base64") == nil)
    }
}

@Suite("Service token source")
struct ServiceTokenSourceTests {
    @Test("fetches a service token once, shares it between concurrent callers, refetches a minute before it expires")
    func reuse() async throws {
        let time = ManualTime()
        let identity = try await FakeIdentity(clock: .manual(time))
        try await identity.serve { url in
            let source = ServiceTokenSource(identity: url, service: "content", secret: FakeIdentity.serviceSecret, clock: .manual(time))
            async let a = source.token()
            async let b = source.token()
            let (first, second) = try await (a, b)
            #expect(first == second)
            let verifier = await identity.issuer.localVerifier()
            #expect(try await verifier.verify(first, audience: TokenAudience.service).sub == "service:content")
            time.advance(by: 800)
            #expect(try await source.token() == first, "refetched with 100 s left")
            time.advance(by: 50)
            #expect(try await source.token() != first, "kept a token with 50 s left")
        }
    }

    @Test("a wrong secret is an error naming identity's answer")
    func wrongSecret() async throws {
        let identity = try await FakeIdentity()
        try await identity.serve { url in
            let source = ServiceTokenSource(identity: url, service: "content", secret: "nope")
            await #expect(throws: ServiceTokenUnavailable.self) { try await source.token() }
        }
    }
}
