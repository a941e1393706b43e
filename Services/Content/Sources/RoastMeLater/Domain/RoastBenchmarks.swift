import Foundation
import LanternCore
import LanternLLM
import LanternRendering

/// What `lantern-bench roastmelater` times in process, through the code a request runs: a roast written by the local
/// grammar (prompt built, grammar expanded, guards), and a share card drawn and encoded as PNG.
@_spi(Benchmarks)
public enum RoastBenchmarks {
    /// Seconds per artisanal roast, every category × spice × mood × language in turn.
    public static func localRoasts(count: Int) throws -> [Double] {
        let catalogue = try RoastMeLaterContent.catalogue()
        let writer = RoastWriter(generator: NoModel(), local: LocalGenerator(grammars: try RoastMeLaterContent.module.grammars()))
        var samples: [Double] = []
        let user = UUID()
        for n in 0..<count {
            let category = catalogue.categories[n % catalogue.categories.count]
            guard let spice = catalogue.spice(n % 5 + 1) else { continue }
            let mood = n % 6 == 5 ? nil : catalogue.moods[n % catalogue.moods.count]
            let order = RoastOrder(category: category, spice: spice, mood: mood, language: n % 2 == 0 ? .en : .vi, timeZone: .gmt)
            let started = ContinuousClock.now
            let written = writer.artisanal(order, user: user, roast: UUID())
            samples.append((ContinuousClock.now - started).inSeconds)
            guard written.artisanal, !written.text.isEmpty else { throw CatalogueGap(detail: "roast \(n) came out empty") }
        }
        return samples
    }

    /// Seconds and bytes per share card of a 220-character Vietnamese roast, templates and formats in turn.
    public static func cards(count: Int) async throws -> [(seconds: Double, bytes: Int)] {
        let catalogue = try RoastMeLaterContent.catalogue()
        let text = String(String(repeating: "Cuộc họp đứng mười lăm phút của bạn đã kéo dài hơn cả một bộ phim 😂, ", count: 4).prefix(220))
        var samples: [(Double, Int)] = []
        for n in 0..<count {
            let category = catalogue.categories[n % catalogue.categories.count]
            let content = ShareCard.Content(text: text, language: .vi, category: category, categoryName: category.names.vi, spice: n % 5 + 1,
                                            link: "https://roastmelater.app")
            let template = catalogue.cardTemplates[n % catalogue.cardTemplates.count].id
            let format = ShareCard.Format.allCases[(n / catalogue.cardTemplates.count) % 2]
            let started = ContinuousClock.now
            let png = try await Renderer.run { try ShareCard.png(content, template: template, format: format) }
            samples.append(((ContinuousClock.now - started).inSeconds, png.count))
        }
        return samples
    }
}

/// No model: the artisanal path is what is timed.
private struct NoModel: TextGenerator {
    func generate(_ request: LLMRequest) async throws -> GeneratedText { throw ProviderFailure(.unavailable, "no model in the benchmark") }
}
