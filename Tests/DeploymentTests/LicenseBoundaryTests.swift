import Foundation
import Testing

/// The Swiss Ephemeris is AGPL-3.0: only the targets under Services/Astrology (AGPL themselves) may link it.
/// Test targets may (test bundles are not distributed), but no library or executable elsewhere.
@Suite("AGPL boundary")
struct LicenseBoundaryTests {
    @Test("no library or executable outside Services/Astrology depends on the Swiss Ephemeris or on astrology's code")
    func boundary() async throws {
        let manifest = try await PackageManifest.load()
        let agpl: Set<String> = ["CSwissEph", "Ephemeris", "AstrologyService"]
        var checked = 0
        for target in manifest.targets where ["regular", "executable"].contains(target.type) {
            guard let path = target.path else { continue }
            checked += 1
            if path.hasPrefix("Services/Astrology/") { continue }
            #expect(target.localDependencies.isDisjoint(with: agpl), "\(path) links AGPL code: \(target.localDependencies.intersection(agpl).sorted())")
        }
        #expect(checked > 10)
        #expect(FileManager.default.fileExists(atPath: ComposeTests.root.appendingPathComponent("Services/Astrology/LICENSE").path))
        let license = try String(contentsOf: ComposeTests.root.appendingPathComponent("Services/Astrology/LICENSE"), encoding: .utf8)
        #expect(license.contains("GNU AFFERO GENERAL PUBLIC LICENSE") && license.contains("Version 3, 19 November 2007"))
        let root = try String(contentsOf: ComposeTests.root.appendingPathComponent("LICENSE"), encoding: .utf8)
        #expect(root.contains("Apache License") && root.contains("Version 2.0"))
    }
}
