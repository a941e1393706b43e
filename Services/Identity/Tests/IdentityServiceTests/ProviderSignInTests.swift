import Foundation
import HummingbirdTesting
import LanternTestSupport
import Testing

@Suite("Google and Apple sign-in against a local key set")
struct ProviderSignInTests {
    static let audience = "pairly-ios.apps.googleusercontent.com"

    func body(_ token: String, app: String = "pairly") -> String { #"{"idToken":"\#(token)","app":"\#(app)"}"# }

    @Test("a valid Google ID token creates the account with name and email, then finds it again")
    func validGoogle() async throws {
        let provider = FakeIdentityProvider()
        let key = try FakeIdentityProvider.makeKey()
        provider.publish([key])
        try await provider.serve { url in
            try await IdentityHarness.run(google: url) { h in
                let token = try await provider.idToken(key: key, claims: FakeIdentityProvider.googleClaims(sub: "g-123", audience: Self.audience, now: h.time.now))
                let first = try await h.request(.post, "/v1/auth/google", json: body(token))
                #expect(first.status == .created, "\(String(buffer: first.body))")
                let tokens = try first.json(Tokens.self)
                #expect(tokens.user?.displayName == "Ana" && tokens.user?.email == "ana@example.com" && tokens.user?.signInMethods == ["google"])
                // Issuer without scheme, second client id, same subject → same account.
                let again = try await provider.idToken(key: key, claims: FakeIdentityProvider.googleClaims(
                    sub: "g-123", audience: "pairly-android", now: h.time.now, issuer: "accounts.google.com", email: "ana@new.example"))
                let second = try await h.request(.post, "/v1/auth/google", json: body(again))
                #expect(second.status == .ok)
                let user = try second.json(Tokens.self).user
                #expect(user?.id == tokens.user?.id && user?.email == "ana@new.example")
            }
        }
    }

    @Test("wrong audience, wrong issuer, expired, alg none and HS256-with-the-public-key are refused")
    func refusedTokens() async throws {
        let provider = FakeIdentityProvider()
        let key = try FakeIdentityProvider.makeKey()
        provider.publish([key])
        try await provider.serve { url in
            try await IdentityHarness.run(google: url) { h in
                let now = h.time.now
                let wrongAudience = try await provider.idToken(key: key, claims: FakeIdentityProvider.googleClaims(sub: "g", audience: "someone-else", now: now))
                try await h.request(.post, "/v1/auth/google", json: body(wrongAudience)).expectProblem(401, "invalid_id_token")

                let wrongIssuer = try await provider.idToken(key: key, claims: FakeIdentityProvider.googleClaims(sub: "g", audience: Self.audience, now: now, issuer: "https://evil.example"))
                try await h.request(.post, "/v1/auth/google", json: body(wrongIssuer)).expectProblem(401, "invalid_id_token")

                let expired = try await provider.idToken(key: key, claims: FakeIdentityProvider.googleClaims(sub: "g", audience: Self.audience, now: now.addingTimeInterval(-3700)))
                try await h.request(.post, "/v1/auth/google", json: body(expired)).expectProblem(401, "id_token_expired")

                let none = try FakeIdentityProvider.unsignedToken(claims: FakeIdentityProvider.googleClaims(sub: "g", audience: Self.audience, now: now))
                try await h.request(.post, "/v1/auth/google", json: body(none)).expectProblem(401, "invalid_id_token")

                let confused = try FakeIdentityProvider.hmacWithPublicKey(key, claims: FakeIdentityProvider.googleClaims(sub: "g", audience: Self.audience, now: now))
                try await h.request(.post, "/v1/auth/google", json: body(confused)).expectProblem(401, "invalid_id_token")

                let otherKey = try FakeIdentityProvider.makeKey(kid: key.kid)  // right kid, wrong key
                let forged = try await provider.idToken(key: otherKey, claims: FakeIdentityProvider.googleClaims(sub: "g", audience: Self.audience, now: now))
                try await h.request(.post, "/v1/auth/google", json: body(forged)).expectProblem(401, "invalid_id_token")

                // An empty subject, and an audience list naming us without (or with another) authorized party.
                let noSubject = try await provider.idToken(key: key, claims: FakeIdentityProvider.googleClaims(sub: "", audience: Self.audience, now: now))
                try await h.request(.post, "/v1/auth/google", json: body(noSubject)).expectProblem(401, "invalid_id_token")
                var shared = FakeIdentityProvider.googleClaims(sub: "g", audience: Self.audience, now: now)
                shared["aud"] = ["other-app.apps.googleusercontent.com", Self.audience]
                let noParty = try await provider.idToken(key: key, claims: shared)
                try await h.request(.post, "/v1/auth/google", json: body(noParty)).expectProblem(401, "invalid_id_token")
                shared["azp"] = "other-app.apps.googleusercontent.com"
                let otherParty = try await provider.idToken(key: key, claims: shared)
                try await h.request(.post, "/v1/auth/google", json: body(otherParty)).expectProblem(401, "invalid_id_token")
                shared["azp"] = Self.audience
                let ourParty = try await provider.idToken(key: key, claims: shared)
                #expect(try await h.request(.post, "/v1/auth/google", json: body(ourParty)).status == .created)

                try await h.request(.post, "/v1/auth/google", json: body("garbage")).expectProblem(401, "malformed_token")
                try await h.request(.post, "/v1/auth/google", json: #"{"app":"pairly"}"#).expectProblem(422, "validation_failed", field: "idToken")
            }
        }
    }

    @Test("a token signed with a rotated-in key is accepted after the key set is fetched again")
    func keyRotation() async throws {
        let provider = FakeIdentityProvider()
        let old = try FakeIdentityProvider.makeKey()
        provider.publish([old])
        try await provider.serve { url in
            try await IdentityHarness.run(google: url) { h in
                let first = try await provider.idToken(key: old, claims: FakeIdentityProvider.googleClaims(sub: "g-1", audience: Self.audience, now: h.time.now))
                #expect(try await h.request(.post, "/v1/auth/google", json: body(first)).status == .created)
                let fetchesBefore = provider.fetchCount.withLock { $0 }

                let new = try FakeIdentityProvider.makeKey()
                provider.publish([old, new])
                // Refreshes triggered by unknown kids are spaced at least 1 s apart (a flood of made-up kids must not
                // become a flood of fetches); a real rotation is never this close to the first fetch.
                try await Task.sleep(for: .milliseconds(1100))
                let second = try await provider.idToken(key: new, claims: FakeIdentityProvider.googleClaims(sub: "g-1", audience: Self.audience, now: h.time.now))
                let response = try await h.request(.post, "/v1/auth/google", json: body(second))
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                #expect(provider.fetchCount.withLock { $0 } == fetchesBefore + 1)
                // Unknown kids do not trigger a fetch per request: a flood of them costs at most one fetch per second
                // (counted from the flood's duration, so a slow machine cannot fail this).
                let stranger = try FakeIdentityProvider.makeKey()
                let third = try await provider.idToken(key: stranger, claims: FakeIdentityProvider.googleClaims(sub: "g-1", audience: Self.audience, now: h.time.now))
                let flood = ContinuousClock.now
                for _ in 0..<6 {
                    try await h.request(.post, "/v1/auth/google", json: body(third)).expectProblem(401, "invalid_id_token")
                }
                let seconds = Int((ContinuousClock.now - flood).components.seconds)
                #expect(provider.fetchCount.withLock { $0 } <= fetchesBefore + 2 + seconds)
            }
        }
    }

    @Test("Sign in with Apple: name comes from the app on first sign-in")
    func apple() async throws {
        let provider = FakeIdentityProvider()
        let key = try FakeIdentityProvider.makeKey()
        provider.publish([key])
        try await provider.serve { url in
            try await IdentityHarness.run(apple: url) { h in
                let token = try await provider.idToken(key: key, claims: FakeIdentityProvider.googleClaims(
                    sub: "001234.abcd", audience: "com.lantern.pairly", now: h.time.now, issuer: "https://appleid.apple.com", email: "x@privaterelay.appleid.com", name: nil))
                let response = try await h.request(.post, "/v1/auth/apple", json: #"{"idToken":"\#(token)","app":"pairly","displayName":"Bohdan"}"#)
                #expect(response.status == .created, "\(String(buffer: response.body))")
                let user = try response.json(Tokens.self).user
                #expect(user?.displayName == "Bohdan" && user?.signInMethods == ["apple"])
                // A Google-issued token is not an Apple token.
                let google = try await provider.idToken(key: key, claims: FakeIdentityProvider.googleClaims(sub: "g", audience: "com.lantern.pairly", now: h.time.now))
                try await h.request(.post, "/v1/auth/apple", json: body(google)).expectProblem(401, "invalid_id_token")
                // Google is not configured in this instance.
                try await h.request(.post, "/v1/auth/google", json: body(token)).expectProblem(503, "provider_not_configured")
            }
        }
    }

    @Test("an unreachable key set is a 503, not the user's fault")
    func keySetDown() async throws {
        try await IdentityHarness.run(google: URL(string: "http://127.0.0.1:9/certs")!) { h in
            let key = try FakeIdentityProvider.makeKey()
            let token = try await FakeIdentityProvider().idToken(key: key, claims: FakeIdentityProvider.googleClaims(sub: "g", audience: Self.audience, now: h.time.now))
            try await h.request(.post, "/v1/auth/google", json: body(token)).expectProblem(503, "identity_provider_unavailable")
        }
    }
}
