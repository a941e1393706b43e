import Foundation
import LanternContracts
import LanternCore
import LanternLLM

/// What `lantern-bench astrosvitla` times in process, through the same code a request runs: matching a chart's
/// rules and composing a report locally (shape check included), and rendering its PDF.
@_spi(Benchmarks)
public enum ReportBenchmarks {
    /// Seconds per report for `count` random charts (all areas, both languages in turn).
    public static func localReports(count: Int) throws -> [Double] {
        let (_, book, texts) = try AstroSvitlaContent.catalogue()
        let matcher = RuleMatcher(book: book)
        let composer = ReportComposer(texts: texts)
        var random = SplitMix64(seed: 7)
        var samples: [Double] = []
        for n in 0..<count {
            let chart = randomChart(&random)
            let area = LifeArea.allCases[n % 5], language = ReportLanguage.allCases[n % 2]
            let started = ContinuousClock.now
            let all = matcher.matches(chart)
            let sections = composer.compose(area: area, language: language, matches: all.filter { $0.rule.areas[area] != nil }, others: all,
                                            timeKnown: true, seed: GenerationSeed("bench", "\(n)"))
            guard ReportShape.problems(sections, language: language).isEmpty else { throw CatalogueError("report \(n) out of shape") }
            samples.append((ContinuousClock.now - started).inSeconds)
        }
        return samples
    }

    /// Seconds and bytes per PDF of a composed Ukrainian report with `svg` as its chart.
    public static func pdfs(count: Int, svg: String) async throws -> [(seconds: Double, bytes: Int)] {
        let (areas, book, texts) = try AstroSvitlaContent.catalogue()
        let matcher = RuleMatcher(book: book)
        var random = SplitMix64(seed: 11)
        let all = matcher.matches(randomChart(&random))
        let sections = ReportComposer(texts: texts).compose(area: .career, language: .uk, matches: all.filter { $0.rule.areas[.career] != nil },
                                                            others: all, timeKnown: true, seed: GenerationSeed("bench"))
        let title = areas.first { $0.id == .career }?.title[.uk] ?? "Career"
        var samples: [(Double, Int)] = []
        for _ in 0..<count {
            let started = ContinuousClock.now
            let data = try await ReportPDF.render(title: title, sections: sections, chartSVG: svg, language: .uk, notes: [], writtenAt: Date())
            samples.append(((ContinuousClock.now - started).inSeconds, data.count))
        }
        return samples
    }

    static func randomChart(_ random: inout SplitMix64) -> NatalChartSummary {
        let planets = ChartNames.planets.map { NatalChartSummary.Planet(body: $0, sign: ChartNames.signs[Int(random.next() % 12)],
                                                                         house: Int(random.next() % 12) + 1, retrograde: false) }
        var aspects: [NatalChartSummary.Aspect] = []
        for (i, first) in ChartNames.planets.enumerated() {
            for second in ChartNames.planets[(i + 1)...] where random.next() % 3 == 0 {
                aspects.append(.init(first: first, second: second, type: ["conjunction", "opposition", "square", "trine", "sextile"][Int(random.next() % 5)],
                                     orb: Double(random.next() % 500) / 100))
            }
        }
        return NatalChartSummary(planets: planets, houses: .init(ascendantSign: ChartNames.signs[Int(random.next() % 12)],
                                                                 midheavenSign: ChartNames.signs[Int(random.next() % 12)], reliable: true),
                                 aspects: aspects, fingerprint: "")
    }
}
