import DevIdentity
import Foundation
import HummingbirdTesting
import LanternTestSupport
import Testing

@Suite("Linking a Google or Apple identity to the signed-in account")
struct IdentityLinkingTests {
    static let audience = ProviderSignInTests.audience

    func body(_ token: String, app: String = "luckyday") -> String { #"{"idToken":"\#(token)","app":"\#(app)"}"# }

    /// A Google ID token for `sub`, valid for an hour from the harness's clock.
    func google(_ provider: FakeIdentityProvider, _ key: FakeIdentityProvider.Key, sub: String, _ h: IdentityHarness) async throws -> String {
        try await provider.idToken(key: key, claims: FakeIdentityProvider.googleClaims(sub: sub, audience: Self.audience, now: h.time.now))
    }

    /// The problem's `code` and its `provider` extension member.
    struct LinkProblem: Decodable {
        var code: String
        var provider: String?
    }

    @Test("a device account links Google and keeps its id; a second device signs in to it with that identity; linking again is 200")
    func linkThenSignInElsewhere() async throws {
        let provider = FakeIdentityProvider()
        let key = try FakeIdentityProvider.makeKey()
        provider.publish([key])
        try await provider.serve { url in
            try await IdentityHarness.run(google: url) { h in
                let device = try await h.signInDevice()
                let account = try #require(device.user)
                #expect(account.signInMethods == ["device"] && account.email == nil)
                let token = try await google(provider, key, sub: "g-link", h)

                let linked = try await h.request(.post, "/v1/auth/link/google", token: device.accessToken, json: body(token))
                #expect(linked.status == .ok, "\(String(buffer: linked.body))")
                let user = try linked.json(UserBody.self)
                #expect(user.id == account.id && user.app == "luckyday")
                #expect(user.signInMethods == ["device", "google"] && user.email == "ana@example.com")
                // The answer is the account as `GET /v1/me` shows it.
                let me = try await h.request(.get, "/v1/me", token: device.accessToken)
                #expect(try me.json(UserBody.self) == user)

                // A second device: Google sign-in finds the linked credential, so the same account (not a new one).
                let second = try await h.request(.post, "/v1/auth/google", json: body(token))
                #expect(second.status == .ok, "\(String(buffer: second.body))")
                let tokens = try second.json(Tokens.self)
                #expect(tokens.user?.id == account.id && tokens.isNewUser == false)
                #expect(try await h.request(.get, "/v1/me", token: tokens.accessToken).json(UserBody.self).id == account.id)

                // Linking the same identity again, from either device, changes nothing.
                for session in [device, tokens] {
                    let again = try await h.request(.post, "/v1/auth/link/google", token: session.accessToken, json: body(token))
                    #expect(again.status == .ok, "\(String(buffer: again.body))")
                    #expect(try again.json(UserBody.self).signInMethods == ["device", "google"])
                }
            }
        }
    }

    @Test("an identity that signs in to another account is 409 identity_already_linked; a second Google identity is 409 provider_already_linked")
    func conflicts() async throws {
        let provider = FakeIdentityProvider()
        let key = try FakeIdentityProvider.makeKey()
        provider.publish([key])
        try await provider.serve { url in
            try await IdentityHarness.run(google: url) { h in
                let a = try await h.signInDevice()
                let b = try await h.signInDevice()
                let first = try await google(provider, key, sub: "g-1", h)
                #expect(try await h.request(.post, "/v1/auth/link/google", token: a.accessToken, json: body(first)).status == .ok)

                // The same Google identity from another device account.
                let taken = try await h.request(.post, "/v1/auth/link/google", token: b.accessToken, json: body(first))
                taken.expectProblem(409, "identity_already_linked")
                #expect(try taken.json(ProblemBody.self).type == "https://lantern.dev/problems/identity-already-linked")
                #expect(try taken.json(LinkProblem.self).provider == "google")
                #expect(try await h.request(.get, "/v1/me", token: b.accessToken).json(UserBody.self).signInMethods == ["device"])

                // A Google identity that made its own account by signing in is taken just the same.
                let own = try await google(provider, key, sub: "g-own", h)
                #expect(try await h.request(.post, "/v1/auth/google", json: body(own)).status == .created)
                try await h.request(.post, "/v1/auth/link/google", token: b.accessToken, json: body(own)).expectProblem(409, "identity_already_linked")

                // A second, different Google identity on an account that has one.
                let second = try await google(provider, key, sub: "g-2", h)
                let another = try await h.request(.post, "/v1/auth/link/google", token: a.accessToken, json: body(second))
                another.expectProblem(409, "provider_already_linked")
                #expect(try another.json(LinkProblem.self).provider == "google")
                // It was not linked: signing in with it makes a new account.
                let stranger = try await h.request(.post, "/v1/auth/google", json: body(second))
                #expect(stranger.status == .created)
                #expect(try stranger.json(Tokens.self).user?.id != a.user?.id)
            }
        }
    }

    @Test("two accounts racing for one identity: one links it, the others get 409; one account racing two identities keeps one")
    func races() async throws {
        let provider = FakeIdentityProvider()
        let key = try FakeIdentityProvider.makeKey()
        provider.publish([key])
        try await provider.serve { url in
            try await IdentityHarness.run(google: url) { h in
                var accounts: [Tokens] = []
                for _ in 0..<6 { accounts.append(try await h.signInDevice()) }
                let token = try await google(provider, key, sub: "g-race", h)
                let sessions = accounts
                let outcomes = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                    for session in sessions {
                        group.addTask {
                            let response = try await h.request(.post, "/v1/auth/link/google", token: session.accessToken, json: body(token))
                            guard response.status == .ok else {
                                let problem = try? response.json(ProblemBody.self)
                                return (Int(response.status.code), problem?.code)
                            }
                            let user = try response.json(UserBody.self)
                            return (200, user.id)
                        }
                    }
                    return try await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
                }
                let winners = outcomes.filter { $0.0 == 200 }
                #expect(winners.count == 1, "\(outcomes)")
                #expect(outcomes.filter { $0.0 == 409 && $0.1 == "identity_already_linked" }.count == sessions.count - 1, "\(outcomes)")
                let signIn = try await h.request(.post, "/v1/auth/google", json: body(token))
                #expect(signIn.status == .ok)
                #expect(try signIn.json(Tokens.self).user?.id == winners.first?.1)

                // One account, two Google identities at once: one is linked, the other refused.
                let account = try await h.signInDevice()
                let x = try await google(provider, key, sub: "g-x", h)
                let y = try await google(provider, key, sub: "g-y", h)
                let tokens = [x, y]
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for idToken in tokens {
                        group.addTask {
                            let response = try await h.request(.post, "/v1/auth/link/google", token: account.accessToken, json: body(idToken))
                            if response.status != .ok { response.expectProblem(409, "provider_already_linked") }
                            return Int(response.status.code)
                        }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.sorted() == [200, 409])
                #expect(try await h.request(.get, "/v1/me", token: account.accessToken).json(UserBody.self).signInMethods == ["device", "google"])
            }
        }
    }

    @Test("linking needs an access token; a bad ID token or body gets sign-in's problems; a deleted account is 401")
    func refusals() async throws {
        let provider = FakeIdentityProvider()
        let key = try FakeIdentityProvider.makeKey()
        provider.publish([key])
        try await provider.serve { url in
            try await IdentityHarness.run(google: url) { h in
                let device = try await h.signInDevice()
                let now = h.time.now
                let valid = try await google(provider, key, sub: "g-ok", h)
                try await h.request(.post, "/v1/auth/link/google", json: body(valid)).expectProblem(401, "missing_token")
                try await h.request(.post, "/v1/auth/link/google", token: "not-a-token", json: body(valid)).expectProblem(401, "malformed_token")

                let expired = try await provider.idToken(key: key, claims: FakeIdentityProvider.googleClaims(sub: "g-ok", audience: Self.audience, now: now.addingTimeInterval(-3700)))
                try await h.request(.post, "/v1/auth/link/google", token: device.accessToken, json: body(expired)).expectProblem(401, "id_token_expired")
                let wrongAudience = try await provider.idToken(key: key, claims: FakeIdentityProvider.googleClaims(sub: "g-ok", audience: "someone-else", now: now))
                try await h.request(.post, "/v1/auth/link/google", token: device.accessToken, json: body(wrongAudience)).expectProblem(401, "invalid_id_token")
                let otherKey = try FakeIdentityProvider.makeKey(kid: key.kid)  // right kid, wrong key
                let forged = try await provider.idToken(key: otherKey, claims: FakeIdentityProvider.googleClaims(sub: "g-ok", audience: Self.audience, now: now))
                try await h.request(.post, "/v1/auth/link/google", token: device.accessToken, json: body(forged)).expectProblem(401, "invalid_id_token")
                try await h.request(.post, "/v1/auth/link/google", token: device.accessToken, json: body("garbage")).expectProblem(401, "malformed_token")
                try await h.request(.post, "/v1/auth/link/google", token: device.accessToken, json: #"{"app":"luckyday"}"#)
                    .expectProblem(422, "validation_failed", field: "idToken")
                // The body names the account's app.
                try await h.request(.post, "/v1/auth/link/google", token: device.accessToken, json: body(valid, app: "symbi"))
                    .expectProblem(422, "validation_failed", field: "app")
                // Apple is not configured in this instance.
                try await h.request(.post, "/v1/auth/link/apple", token: device.accessToken, json: body(valid)).expectProblem(503, "provider_not_configured")
                // None of these linked anything.
                #expect(try await h.request(.get, "/v1/me", token: device.accessToken).json(UserBody.self).signInMethods == ["device"])

                // The account is deleted; its access token lives on until it expires.
                #expect(try await h.request(.delete, "/v1/me", token: device.accessToken).status == .noContent)
                try await h.request(.post, "/v1/auth/link/google", token: device.accessToken, json: body(valid)).expectProblem(401, "account_deleted")
                // Nothing was left behind: the identity is free to sign up.
                #expect(try await h.request(.post, "/v1/auth/google", json: body(valid)).status == .created)
            }
        }
    }

    @Test("an email the provider has not verified is not kept, at linking or sign-in; Apple's \"true\" as a string is verified (#44 item 5)")
    func unverifiedEmail() async throws {
        let provider = FakeIdentityProvider()
        let key = try FakeIdentityProvider.makeKey()
        provider.publish([key])
        try await provider.serve { url in
            try await IdentityHarness.run(google: url, apple: url) { h in
                let device = try await h.signInDevice(app: "symbi")
                let unverified = try await provider.idToken(key: key, claims: FakeIdentityProvider.googleClaims(
                    sub: "g-unverified", audience: "pairly-android", now: h.time.now, email: "victim@example.com", emailVerified: false))
                let linked = try await h.request(.post, "/v1/auth/link/google", token: device.accessToken, json: body(unverified, app: "symbi"))
                #expect(linked.status == .ok, "\(String(buffer: linked.body))")
                #expect(try linked.json(UserBody.self).email == nil)
                let absent = try await provider.idToken(key: key, claims: FakeIdentityProvider.googleClaims(
                    sub: "g-no-flag", audience: "pairly-android", now: h.time.now, email: "someone@example.com", emailVerified: nil))
                let signedIn = try await h.request(.post, "/v1/auth/google", json: body(absent, app: "symbi"))
                #expect(try signedIn.json(Tokens.self).user?.email == nil, "\(String(buffer: signedIn.body))")
                let apple = try await provider.idToken(key: key, claims: FakeIdentityProvider.googleClaims(
                    sub: "001234.string", audience: "com.lantern.pairly", now: h.time.now, issuer: "https://appleid.apple.com",
                    email: "y@privaterelay.appleid.com", emailVerified: "true", name: nil))
                let appleSignIn = try await h.request(.post, "/v1/auth/apple", json: body(apple, app: "symbi"))
                #expect(try appleSignIn.json(Tokens.self).user?.email == "y@privaterelay.appleid.com", "\(String(buffer: appleSignIn.body))")
            }
        }
    }

    @Test("Sign in with Apple: a device account links its Apple identity, then Apple sign-in on another device finds it")
    func apple() async throws {
        let provider = FakeIdentityProvider()
        let key = try FakeIdentityProvider.makeKey()
        provider.publish([key])
        try await provider.serve { url in
            try await IdentityHarness.run(google: url, apple: url) { h in
                let device = try await h.signInDevice(app: "symbi")
                let token = try await provider.idToken(key: key, claims: FakeIdentityProvider.googleClaims(
                    sub: "001234.link", audience: "com.lantern.pairly", now: h.time.now, issuer: "https://appleid.apple.com",
                    email: "x@privaterelay.appleid.com", name: nil))
                let linked = try await h.request(.post, "/v1/auth/link/apple", token: device.accessToken, json: body(token, app: "symbi"))
                #expect(linked.status == .ok, "\(String(buffer: linked.body))")
                let user = try linked.json(UserBody.self)
                #expect(user.id == device.user?.id && user.signInMethods == ["apple", "device"] && user.email == "x@privaterelay.appleid.com")

                let second = try await h.request(.post, "/v1/auth/apple", json: body(token, app: "symbi"))
                #expect(second.status == .ok, "\(String(buffer: second.body))")
                #expect(try second.json(Tokens.self).user?.id == device.user?.id)
                // A Google token is not an Apple token, at linking as at sign-in.
                let googleToken = try await google(provider, key, sub: "g", h)
                try await h.request(.post, "/v1/auth/link/apple", token: device.accessToken, json: body(googleToken, app: "symbi"))
                    .expectProblem(401, "invalid_id_token")
                // The account may hold a Google identity beside its Apple one.
                let withGoogle = try await h.request(.post, "/v1/auth/link/google", token: device.accessToken, json: body(googleToken, app: "symbi"))
                #expect(try withGoogle.json(UserBody.self).signInMethods == ["apple", "device", "google"], "\(String(buffer: withGoogle.body))")
            }
        }
    }
}
