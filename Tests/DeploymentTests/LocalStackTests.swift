import Foundation
import LanternTestSupport
import Testing

/// `make up` (scripts/up.sh) as a team uses it: its settings come from the caller's environment, then `local.env`,
/// then the development defaults — the functions of scripts/local-settings.sh that up.sh calls, run in bash.
@Suite("The local stack's settings")
struct LocalStackTests {
    static let development = "http://127.0.0.1:8089"

    /// Runs `script` after sourcing the settings functions, in an environment of only `environment` (and PATH).
    static func bash(_ script: String, environment: [String: String]) async throws -> String {
        let root = ServiceList.root.path
        let full = "source \(root)/scripts/lib.sh; source \(root)/scripts/services.sh; source \(root)/scripts/local-settings.sh; " + script
        let output = try await ChildProcess.run(URL(fileURLWithPath: "/bin/bash"), ["-c", full],
                                                environment: environment.merging(["PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": NSTemporaryDirectory()]) { $1 })
        #expect(output.status == 0, "\(output.stderr)")
        return String(decoding: output.stdout, as: UTF8.self)
    }

    @Test("the caller's environment wins over local.env, local.env over the defaults; a provider the caller configured is left alone")
    func precedence() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("local-\(UUID().uuidString).env")
        defer { try? FileManager.default.removeItem(at: file) }
        try """
            # a team's settings
            LOG_LEVEL=debug
            export LOG_FORMAT=json

            GOOGLE_CLIENT_IDS=123-team.apps.googleusercontent.com
            CONTENT_URL=http://10.0.0.7:8084
            """.write(to: file, atomically: true, encoding: .utf8)
        let printed = try await Self.bash("""
            load_local_settings "\(file.path)"
            default_setting LOG_LEVEL info; default_setting LOG_FORMAT text; default_setting HTTP_HOST 127.0.0.1
            default_signin_providers \(Self.development)
            export_service_urls 127.0.0.1 0 keep
            echo "LOG_LEVEL=$LOG_LEVEL"; echo "LOG_FORMAT=$LOG_FORMAT"; echo "HTTP_HOST=$HTTP_HOST"
            echo "GOOGLE_JWKS_URL=${GOOGLE_JWKS_URL-unset}"; echo "APPLE_JWKS_URL=$APPLE_JWKS_URL"
            echo "CONTENT_URL=$CONTENT_URL"; echo "IDENTITY_URL=$IDENTITY_URL"
            signin_summary \(Self.development)
            """, environment: ["LOG_LEVEL": "notice", "HTTP_HOST": "0.0.0.0"])
        let lines = Set(printed.split(separator: "\n").map(String.init))
        for expected in ["LOG_LEVEL=notice", "LOG_FORMAT=json", "HTTP_HOST=0.0.0.0",
                         // Google: the team's client id against Google's own key set (identity's default URL).
                         "GOOGLE_JWKS_URL=unset", "APPLE_JWKS_URL=\(Self.development)/apple/jwks.json",
                         "CONTENT_URL=http://10.0.0.7:8084", "IDENTITY_URL=http://127.0.0.1:8081",
                         "GOOGLE google's own key set for 123-team.apps.googleusercontent.com",
                         "APPLE development provider (\(Self.development)) for app.lantern.dev"] {
            #expect(lines.contains(expected), "no '\(expected)' in:\n\(printed)")
        }
    }

    @Test("with nothing set, sign-in goes to the development provider; a line that is not NAME=value stops make up naming it")
    func defaults() async throws {
        let printed = try await Self.bash("""
            load_local_settings /nonexistent/local.env
            default_signin_providers \(Self.development)
            signin_summary \(Self.development)
            """, environment: [:])
        #expect(printed.contains("GOOGLE development provider (\(Self.development)) for lantern-dev.apps.googleusercontent.com"), "\(printed)")
        #expect(printed.contains("APPLE development provider"), "\(printed)")

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("local-\(UUID().uuidString).env")
        defer { try? FileManager.default.removeItem(at: file) }
        try "GOOGLE CLIENT IDS = x\n".write(to: file, atomically: true, encoding: .utf8)
        let root = ServiceList.root.path
        let refused = try await ChildProcess.run(URL(fileURLWithPath: "/bin/bash"),
                                                 ["-c", "source \(root)/scripts/lib.sh; source \(root)/scripts/local-settings.sh; load_local_settings \(file.path)"],
                                                 environment: ["PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": NSTemporaryDirectory()])
        #expect(refused.status != 0)
        #expect((refused.stderr + String(decoding: refused.stdout, as: UTF8.self)).contains("is not NAME=value"))
    }

    @Test("RoastMeLater's operator API gets a development operator whose key is made once and kept; a caller's keys are left alone")
    func operatorKeys() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("roastmelater-operator-key").path
        let script = #"default_operator_keys "\#(file)"; echo "$ROASTMELATER_OPERATOR_KEYS""#
        let first = try await Self.bash(script, environment: [:]).trimmingCharacters(in: .whitespacesAndNewlines)
        let again = try await Self.bash(script, environment: [:]).trimmingCharacters(in: .whitespacesAndNewlines)
        // `local:` and 48 hex digits (24 random bytes): long enough for OperatorKeys, the same after a restart.
        #expect(first.hasPrefix("local:") && first.count == 6 + 48 && first == again, "\(first) / \(again)")
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let theirs = try await Self.bash(script, environment: ["ROASTMELATER_OPERATOR_KEYS": "ops:their-own-secret-of-at-least-32-chars"])
        #expect(theirs.trimmingCharacters(in: .whitespacesAndNewlines) == "ops:their-own-secret-of-at-least-32-chars")
    }
}
