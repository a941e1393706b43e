import DevIdentity
import Foundation
import Hummingbird
import HummingbirdTesting
import IdentityService
import LanternCore
import LanternTestSupport
import Testing

@Suite("The development identity provider")
struct DevIdentityTests {
    /// The provider on loopback, as `make up` runs it, with a key in a folder of the test's own.
    func withProvider(_ body: @Sendable (DevIdentityProvider, URL) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lantern-dev-identity-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let provider = DevIdentityProvider(key: try DevIdentityProvider.key(file: folder.appendingPathComponent("key.pem")))
        try await LoopbackServer.run(router: provider.router()) { port in
            try await body(provider, URL(string: "http://127.0.0.1:\(port)")!)
        }
    }

    @Test("identity in development signs in made-up Google and Apple accounts from it; the same name is the same account")
    func signIn() async throws {
        try await withProvider { provider, url in
            try await IdentityHarness.run(google: url.appendingPathComponent("google/jwks.json"), apple: url.appendingPathComponent("apple/jwks.json"),
                                          extra: ["GOOGLE_CLIENT_IDS": DevIdentityProvider.googleClientID,
                                                  "APPLE_CLIENT_IDS": DevIdentityProvider.appleClientID]) { h in
                let ada = try await provider.mint(.init(provider: .google, name: "Ada", app: "pairly"))
                #expect(ada.signIn.path == "/v1/auth/google" && ada.email == "ada@dev.lantern.test")
                let body = String(decoding: try JSONEncoder().encode(ada.signIn.body), as: UTF8.self)
                let first = try await h.request(.post, "/v1/auth/google", json: body)
                #expect(first.status == .created, "\(String(buffer: first.body))")
                let again = try await provider.mint(.init(provider: .google, name: "ada", app: "pairly"))
                let second = try await h.request(.post, "/v1/auth/google", json: String(decoding: try JSONEncoder().encode(again.signIn.body), as: UTF8.self))
                #expect(second.status == .ok)
                #expect(try second.json(Tokens.self).user?.id == first.json(Tokens.self).user?.id)
                #expect(try first.json(Tokens.self).user?.displayName == "Ada")

                let apple = try await provider.mint(.init(provider: .apple, name: "Bohdan", app: "pairly"))
                let signedIn = try await h.request(.post, "/v1/auth/apple", json: String(decoding: try JSONEncoder().encode(apple.signIn.body), as: UTF8.self))
                #expect(signedIn.status == .created, "\(String(buffer: signedIn.body))")
                // A Google token is not an Apple one: another issuer and audience.
                try await h.request(.post, "/v1/auth/apple", json: body).expectProblem(401, "invalid_id_token")
            }
        }
    }

    @Test("the provider serves its key set and page, keeps its key across restarts, and refuses a bad request naming the field")
    func provider() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lantern-dev-identity-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("key.pem")
        let first = try DevIdentityProvider.key(file: file), second = try DevIdentityProvider.key(file: file)
        #expect(first.kid == second.kid && first.publicPEM == second.publicPEM)
        #expect((try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int) == 0o600)
        let app = Application(router: DevIdentityProvider(key: first).router())
        try await app.test(.router) { client in
            let jwks = try await client.execute(uri: "/google/jwks.json", method: .get)
            #expect(jwks.status == .ok && String(buffer: jwks.body).contains(first.kid))
            let page = try await client.execute(uri: "/", method: .get)
            #expect(page.status == .ok && String(buffer: page.body).contains("<form"))
            for (body, field) in [(#"{"name":""}"#, "name"), (#"{"name":"Ada","app":"tinder"}"#, "app"), (#"{"name":"Ada","provider":"facebook"}"#, "provider")] {
                let refused = try await client.execute(uri: "/token", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: body))
                #expect(refused.status == .unprocessableContent && String(buffer: refused.body).contains(#""field":"\#(field)""#), "\(body): \(String(buffer: refused.body))")
            }
        }
    }

    @Test("the provider answers only requests to its own names: another Host (a web page by DNS rebinding) gets 421 and no token")
    func hostCheck() async throws {
        try await withProvider { _, url in
            let port = try #require(url.port)
            func status(_ path: String, host: String, json: String? = nil) async throws -> String {
                var arguments = ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "-H", "Host: \(host)"]
                if let json { arguments += ["-H", "Content-Type: application/json", "--data", json] }
                let output = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/curl"), arguments + [url.absoluteString + path])
                return String(decoding: output.stdout, as: UTF8.self)
            }
            for host in ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)", "LOCALHOST"] {
                #expect(try await status("/google/jwks.json", host: host) == "200", "\(host)")
                #expect(try await status("/token", host: host, json: #"{"name":"Ada"}"#) == "200", "\(host)")
            }
            for host in ["evil.example:\(port)", "evil.example"] {
                #expect(try await status("/", host: host) == "421", "\(host)")
                #expect(try await status("/google/jwks.json", host: host) == "421", "\(host)")
                #expect(try await status("/token", host: host, json: #"{"name":"Ada"}"#) == "421", "\(host)")
            }
        }
        // ALLOWED_HOSTS (read by lantern-dev-identity) adds names; an entry that is not a name is refused naming it.
        let provider = DevIdentityProvider(key: try IDTokenKey.generate())
        let listed = try provider.router(host: "127.0.0.1", allowedHosts: ["mybox.local"])
        try await LoopbackServer.run(router: listed) { port in
            let output = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                                    ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "-H", "Host: mybox.local:\(port)",
                                                     "http://127.0.0.1:\(port)/google/jwks.json"])
            #expect(String(decoding: output.stdout, as: UTF8.self) == "200")
        }
        #expect(throws: ConfigurationError.self) { _ = try provider.router(host: "127.0.0.1", allowedHosts: ["mybox.local:8089"]) }
    }

    @Test("outside development identity refuses another key set: a deployment cannot be made to trust the development provider")
    func productionRefuses() {
        for variable in ["GOOGLE_JWKS_URL", "APPLE_JWKS_URL"] {
            let settings = Settings.fixed(["DATABASE_URL": "postgres://u@h/d", "GOOGLE_CLIENT_IDS": DevIdentityProvider.googleClientID,
                                           "APPLE_CLIENT_IDS": DevIdentityProvider.appleClientID, variable: "http://127.0.0.1:8089/keys"])
            #expect {
                _ = try IdentityConfiguration(settings: settings)
            } throws: { ($0 as? ConfigurationError)?.variable == variable && "\($0)".contains("LANTERN_ENVIRONMENT=development") }
        }
    }
}
