import Foundation
import LanternAppStore
import LanternCore
import LanternTestSupport
import Testing

/// The variable a start-up refusal names (nil when the configuration was accepted).
private func refusal(_ variables: [String: String]) -> ConfigurationError? {
    do {
        _ = try AppStoreConfiguration(settings: .fixed(variables))
        return nil
    } catch let error as ConfigurationError {
        return error
    } catch {
        Issue.record("not a ConfigurationError: \(error)")
        return nil
    }
}

/// A test App Store's root written to a file, as `APPSTORE_ROOT_CERTIFICATES` names it, while `body` runs.
private func withRootFile(_ body: (String) throws -> Void) throws {
    let store = try TestAppStore()
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("appstore-config-root-\(UUID().uuidString).pem")
    try store.rootPEM.write(to: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(at: file) }
    try body(file.path)
}

@Suite("LanternAppStore: AppStoreConfiguration refuses development-only trust outside development (issue #23 item 4)")
struct AppStoreConfigurationTests {
    @Test("by default: Apple Root CA – G3 alone, Production and Sandbox, in production as in development")
    func defaults() throws {
        for variables in [[:], ["LANTERN_ENVIRONMENT": "production"], ["LANTERN_ENVIRONMENT": "development"]] {
            let configuration = try AppStoreConfiguration(settings: .fixed(variables))
            #expect(configuration.rootCertificates == [AppleRootCertificates.rootCAG3])
            #expect(configuration.environments == [.production, .sandbox])
        }
    }

    @Test("APPSTORE_ROOT_CERTIFICATES outside development (LANTERN_ENVIRONMENT unset or production) stops the start naming it")
    func rootCertificatesRefusedInProduction() throws {
        try withRootFile { path in
            for environment in [nil, "production", "Production"] as [String?] {
                var variables = ["APPSTORE_ROOT_CERTIFICATES": path]
                variables["LANTERN_ENVIRONMENT"] = environment
                let error = try #require(refusal(variables), "accepted with LANTERN_ENVIRONMENT=\(environment ?? "unset")")
                #expect(error.variable == "APPSTORE_ROOT_CERTIFICATES")
                #expect(error.message.contains("LANTERN_ENVIRONMENT=development"), "\(error)")
            }
            // Refused for being set at all, before any file is read: a missing file says the same.
            let missing = try #require(refusal(["APPSTORE_ROOT_CERTIFICATES": "/nonexistent/root.pem"]))
            #expect(missing.variable == "APPSTORE_ROOT_CERTIFICATES" && missing.message.contains("development"), "\(missing)")
        }
    }

    @Test("APPSTORE_ENVIRONMENTS listing Xcode or LocalTesting outside development stops the start naming it")
    func localEnvironmentsRefusedInProduction() throws {
        for list in ["Xcode", "LocalTesting", "Sandbox,Xcode", "Sandbox,LocalTesting", "Production,Xcode"] {
            for environment in [nil, "production"] as [String?] {
                var variables = ["APPSTORE_ENVIRONMENTS": list]
                variables["LANTERN_ENVIRONMENT"] = environment
                let error = try #require(refusal(variables), "\(list) accepted with LANTERN_ENVIRONMENT=\(environment ?? "unset")")
                #expect(error.variable == "APPSTORE_ENVIRONMENTS", "\(error)")
                #expect(error.message.contains("LANTERN_ENVIRONMENT=development"), "\(list): \(error)")
            }
        }
        // What Apple signs stays accepted in production.
        #expect(refusal(["APPSTORE_ENVIRONMENTS": "Production,Sandbox"]) == nil)
        #expect(refusal(["APPSTORE_ENVIRONMENTS": "Sandbox", "LANTERN_ENVIRONMENT": "production"]) == nil)
    }

    @Test("with LANTERN_ENVIRONMENT=development a local signer's root and the Xcode and LocalTesting environments are accepted")
    func developmentAccepted() throws {
        try withRootFile { path in
            let configuration = try AppStoreConfiguration(settings: .fixed(["LANTERN_ENVIRONMENT": "development", "APPSTORE_ROOT_CERTIFICATES": path,
                                                                            "APPSTORE_ENVIRONMENTS": "Xcode,LocalTesting,Sandbox"]))
            #expect(configuration.rootCertificates.count == 1 && configuration.rootCertificates != [AppleRootCertificates.rootCAG3])
            #expect(configuration.environments == [.xcode, .localTesting, .sandbox])
            // Any case, as ProcessSettings reads it.
            #expect(refusal(["LANTERN_ENVIRONMENT": "Development", "APPSTORE_ROOT_CERTIFICATES": path, "APPSTORE_ENVIRONMENTS": "Xcode"]) == nil)
        }
        // Development does not lift the older rule: never Xcode or LocalTesting next to Production.
        let mixed = try #require(refusal(["LANTERN_ENVIRONMENT": "development", "APPSTORE_ENVIRONMENTS": "Production,LocalTesting"]))
        #expect(mixed.variable == "APPSTORE_ENVIRONMENTS" && mixed.message.contains("next to Production"), "\(mixed)")
    }
}
