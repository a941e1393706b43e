import ArgumentParser
@_spi(Benchmarks) import AstroSvitlaContent
import Crypto
import Foundation
import LanternAppStore
import LanternCore
import LanternTestSupport

/// AstroSvitla in process: App Store JWS verification (next to its floor, one bare ES256 signature check of the
/// same bytes), a report composed locally from the rules, and a report's PDF.
struct AstroSvitlaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "astrosvitla", abstract: "purchase verification, local reports and PDFs, in process")
    @Option(help: "JWS verifications") var verifications = 2000
    @Option(help: "reports composed") var reports = 2000
    @Option(help: "PDFs rendered") var pdfs = 40
    @Option(help: "an SVG of a chart (astrology's natal.svg); a small one when absent") var svg: String?

    func run() async throws {
        let store = try TestAppStore()
        let bundle = "app.lantern.astrosvitla"
        let verifier = try SignedDataVerifier(rootCertificates: [store.rootDER], bundleId: bundle, environments: [.production, .sandbox],
                                              maximumAge: 86_400)
        let jws = try store.sign(store.transaction(bundleId: bundle, productId: "\(bundle).report.career", accountToken: UUID()))
        // The floor: the one ES256 signature check inside a verification, with a key already parsed.
        let key = P256.Signing.PrivateKey()
        let input = Data(jws.split(separator: ".").prefix(2).joined(separator: ".").utf8)
        let signature = try key.signature(for: input)
        var verify: [Double] = [], floor: [Double] = []
        for _ in 0..<verifications {
            var started = ContinuousClock.now
            _ = try await verifier.verifyTransaction(jws)
            verify.append((ContinuousClock.now - started).inSeconds * 1e3)
            started = ContinuousClock.now
            guard key.publicKey.isValidSignature(signature, for: input) else { throw ValidationError("floor signature failed") }
            floor.append((ContinuousClock.now - started).inSeconds * 1e3)
        }
        report("astrosvitla.jws-verify", verify, unit: "ms")
        report("astrosvitla.es256-floor", floor, unit: "ms")

        report("astrosvitla.local-report", try ReportBenchmarks.localReports(count: reports).map { $0 * 1e3 }, unit: "ms")

        let picture = try svg.map { try String(contentsOfFile: $0, encoding: .utf8) }
            ?? #"<svg xmlns="http://www.w3.org/2000/svg" width="300" height="300"><circle cx="150" cy="150" r="140" fill="none" stroke="black"/></svg>"#
        let rendered = try await ReportBenchmarks.pdfs(count: pdfs, svg: picture)
        report("astrosvitla.pdf", rendered.map { $0.seconds * 1e3 }, unit: "ms")
        print("astrosvitla.pdf-size max=\(rendered.map(\.bytes).max() ?? 0)B")
    }

    func report(_ name: String, _ values: [Double], unit: String) {
        let sorted = values.sorted()
        func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
        print(String(format: "%@ n=%d p50=%.3f%@ p99=%.3f%@", name, sorted.count, percentile(0.5), unit, percentile(0.99), unit))
    }
}
