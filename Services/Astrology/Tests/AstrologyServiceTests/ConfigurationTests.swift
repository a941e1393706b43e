import AstrologyService
import LanternCore
import Testing

@Suite("Astrology configuration")
struct AstrologyConfigurationTests {
    @Test("CHART_FINGERPRINT_KEY is required outside development; development falls back to the built-in key")
    func fingerprintKey() throws {
        let database = ["DATABASE_URL": "postgres://u@h/d"]
        #expect {
            _ = try AstrologyConfiguration(settings: .fixed(database))
        } throws: { ($0 as? ConfigurationError)?.variable == "CHART_FINGERPRINT_KEY" && "\($0)".contains("development") }
        let development = try AstrologyConfiguration(settings: .fixed(database.merging(["LANTERN_ENVIRONMENT": "development"]) { $1 }))
        #expect(development.fingerprintKey == AstrologyConfiguration.developmentFingerprintKey)
        let deployed = try AstrologyConfiguration(settings: .fixed(database.merging(["CHART_FINGERPRINT_KEY": "a-deployment-key-0123456789"]) { $1 }))
        #expect(deployed.fingerprintKey == "a-deployment-key-0123456789")
    }
}
