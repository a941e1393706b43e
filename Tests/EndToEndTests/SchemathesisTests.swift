import Foundation
import LanternTestSupport
import Testing

extension EndToEnd.Shared {
    /// schemathesis (PyPI) against the OpenAPI document the gateway serves, on the running stack: no answer may be a
    /// 5xx (`not_a_server_error`) and every answer must match the document (`response_schema_conformance`), with no
    /// token and with the token of each app that has routes. A fixed seed keeps CI's run the same each time.
    @Suite("The OpenAPI document against the running stack (schemathesis)", .serialized)
    struct SchemathesisTests {
        static var schemathesis: URL? {
            ["/usr/local/bin/schemathesis", "/usr/bin/schemathesis"].map(URL.init(fileURLWithPath:))
                .first { FileManager.default.isExecutableFile(atPath: $0.path) }
                ?? (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
                    .map { URL(fileURLWithPath: String($0)).appendingPathComponent("schemathesis") }
                    .first { FileManager.default.isExecutableFile(atPath: $0.path) }
        }

        @Test("no server error and every answer as documented, anonymous and as AstroSvitla, Lucky Day, Pairly, RoastMeLater and Symbi users")
        func conformance() async throws {
            // On PATH, or in the scripts folder of the python3 that pip installed it with.
            var found = Self.schemathesis
            if found == nil {
                let scripts = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"),
                                                         ["python3", "-c", "import sysconfig; print(sysconfig.get_path('scripts'))"])
                let folder = String(decoding: scripts.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                let candidate = URL(fileURLWithPath: folder).appendingPathComponent("schemathesis")
                if FileManager.default.isExecutableFile(atPath: candidate.path) { found = candidate }
            }
            let tool = try #require(found, "schemathesis is not installed (scripts/test.sh installs it from PyPI)")
            // On the shared stack: Google and Apple sign-in configured, their key sets empty and local, so a made-up
            // ID token is a 401, not a 503 for a provider that is not set up or whose keys cannot be fetched.
            try await Stack.shared { stack in
                var tokens: [(String, String?)] = [("anonymous", nil)]
                for app in ["astrosvitla", "luckyday", "pairly", "roastmelater", "symbi"] {
                    let reply = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"\#(app)"}"#)
                    tokens.append((app, try reply.json(TokenReply.self).accessToken))
                }
                for (who, token) in tokens {
                    var arguments = ["run", stack.gateway + "/openapi.yaml", "--url", stack.gateway,
                                     "--checks", "not_a_server_error,response_schema_conformance",
                                     "--phases", "examples,fuzzing", "--max-examples", "5", "--seed", "2026", "--workers", "1",
                                     "--request-timeout", "20", "--no-color"]
                    if let token { arguments += ["-H", "Authorization: Bearer \(token)"] }
                    let output = try await ChildProcess.run(tool, arguments)
                    let text = String(decoding: output.stdout, as: UTF8.self)
                    #expect(output.status == 0, "schemathesis as \(who): \(text.suffix(4000)) \(output.stderr.suffix(1000))")
                }
            }
        }
    }
}
