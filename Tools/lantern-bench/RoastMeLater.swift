import ArgumentParser
import Foundation
@_spi(Benchmarks) import RoastMeLaterContent

/// RoastMeLater in process: a roast by the local grammar (the embedded default every roast falls back to) and a
/// share card drawn and encoded (1080×1920 and 1080×1080, every template).
struct RoastMeLaterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "roastmelater", abstract: "the local roast generator and share cards, in process")
    @Option(help: "roasts written by the local grammar") var roasts = 20_000
    @Option(help: "share cards drawn") var cards = 48

    func run() async throws {
        report("roastmelater.local-roast", try RoastBenchmarks.localRoasts(count: roasts).map { $0 * 1e3 })
        let drawn = try await RoastBenchmarks.cards(count: cards)
        report("roastmelater.card", drawn.map { $0.seconds * 1e3 })
        print("roastmelater.card-size max=\(drawn.map(\.bytes).max() ?? 0)B")
    }

    func report(_ name: String, _ values: [Double]) {
        let sorted = values.sorted()
        func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
        print(String(format: "%@ n=%d p50=%.3fms p99=%.3fms", name, sorted.count, percentile(0.5), percentile(0.99)))
    }
}
