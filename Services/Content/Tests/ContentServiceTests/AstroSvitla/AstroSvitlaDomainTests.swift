@testable import AstroSvitlaContent
import Foundation
import LanternContracts
import LanternLLM
import NIOPosix
import Testing

/// A random chart in the shape astrology answers: real charts are in the end-to-end coverage test; these cover
/// every combination the book must answer, including ones real skies rarely make.
private func randomChart(_ random: inout SplitMix64, timeKnown: Bool) -> NatalChartSummary {
    let planets = ChartNames.planets.map { body in
        NatalChartSummary.Planet(body: body, sign: ChartNames.signs[Int(random.next() % 12)], house: Int(random.next() % 12) + 1,
                                 retrograde: random.next() % 5 == 0)
    }
    var aspects: [NatalChartSummary.Aspect] = []
    for (i, first) in ChartNames.planets.enumerated() {
        for second in ChartNames.planets[(i + 1)...] where random.next() % 3 == 0 {
            let type = ["conjunction", "opposition", "square", "trine", "sextile"][Int(random.next() % 5)]
            aspects.append(.init(first: first, second: second, type: type, orb: Double(random.next() % 500) / 100))
        }
    }
    return NatalChartSummary(planets: planets, houses: .init(ascendantSign: ChartNames.signs[Int(random.next() % 12)],
                                                             midheavenSign: ChartNames.signs[Int(random.next() % 12)], reliable: timeKnown),
                             aspects: aspects, fingerprint: String(repeating: "a", count: 64))
}

@Suite("AstroSvitla domain: rules, composition, shape")
struct AstroSvitlaDomainTests {
    static let loaded = Result { try AstroSvitlaContent.catalogue() }

    @Test("the rule book answers every placement: 12 points × 12 signs, 10 planets × 12 houses, 45 pairs × 3 aspect families")
    func complete() throws {
        let (areas, book, texts) = try Self.loaded.get()
        #expect(book.missing.isEmpty, "no rule for \(book.missing.prefix(5))")
        #expect(book.rules.count == 144 + 120 + 135)
        #expect(Set(areas.map(\.id)) == Set(LifeArea.allCases))
        #expect(areas.map(\.price) == ["9.99", "6.99", "6.99", "5.99", "5.99"])
        for area in LifeArea.allCases {
            for point in ChartNames.points { #expect(texts.tips[area.rawValue]?[point]?.count ?? 0 >= 2, "tips for \(area) \(point)") }
            #expect(!(texts.intros[area.rawValue] ?? []).isEmpty && !(texts.closings[area.rawValue] ?? []).isEmpty)
        }
    }

    @Test("every rule text is written in both languages (English reads as English, Ukrainian in Cyrillic without Russian letters) and passes the output blocklist")
    func bilingual() async throws {
        let (_, book, _) = try Self.loaded.get()
        let problems = try await NIOThreadPool.singleton.runIfActive {
            var problems: [String] = []
            for rule in book.rules.values {
                for text in [rule.headline] + Array(rule.areas.values) {
                    if let problem = LanguageCheck.problem(text.en, expected: .english) { problems.append("\(rule.id) en: \(problem): \(text.en)") }
                    if let problem = LanguageCheck.problem(text.uk, expected: .ukrainian) { problems.append("\(rule.id) uk: \(problem): \(text.uk)") }
                    if let hit = Blocklist.standard.firstHit(in: text.en) ?? Blocklist.standard.firstHit(in: text.uk) { problems.append("\(rule.id): \(hit)") }
                }
            }
            return problems
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    @Test("the local composition has the required shape for any chart, in both languages, with and without a birth time")
    func localShape() async throws {
        let (_, book, texts) = try Self.loaded.get()
        // Seconds of CPU in a debug build: on NIO's blocking pool, not the few threads every other suite's servers share.
        let problems = try await NIOThreadPool.singleton.runIfActive { Self.compositionProblems(book: book, texts: texts) }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    static func compositionProblems(book: RuleBook, texts: ReportTexts) -> [String] {
        var found: [String] = []
        let matcher = RuleMatcher(book: book)
        let composer = ReportComposer(texts: texts)
        var random = SplitMix64(seed: 2026)
        for n in 0..<60 {
            let chart = randomChart(&random, timeKnown: n % 4 != 0)
            let all = matcher.matches(chart)
            for area in LifeArea.allCases {
                let matches = all.filter { $0.rule.areas[area] != nil }
                for language in ReportLanguage.allCases {
                    let sections = composer.compose(area: area, language: language, matches: matches, others: all,
                                                    timeKnown: chart.houses.reliable, seed: GenerationSeed("test", "\(n)", area.rawValue))
                    let problems = ReportShape.problems(sections, language: language)
                    if !problems.isEmpty { found.append("chart \(n) \(area) \(language): \(problems)") }
                }
            }
        }
        return found
    }

    @Test("without a birth time no house, Ascendant or MC rule is used; with one they are")
    func unknownTime() throws {
        let (_, book, _) = try Self.loaded.get()
        let matcher = RuleMatcher(book: book)
        var chart = FakeAstrology.natal
        chart.houses.reliable = false
        let ids = matcher.matches(chart).map(\.rule.id)
        #expect(!ids.contains { $0.contains("-house-") || $0.hasPrefix("ascendant-") || $0.hasPrefix("midheaven-") })
        chart.houses.reliable = true
        let known = matcher.matches(chart).map(\.rule.id)
        #expect(known.contains("sun-house-9") && known.contains("ascendant-sign-virgo") && known.contains("midheaven-sign-gemini"))
        // Aspects are read by family, each pair once, at its tightest.
        #expect(known.contains("sun-moon-harmonious") && known.contains("venus-saturn-tense") && known.contains("moon-saturn-conjunction"))
    }

    @Test("Accept-Language: the first of English or Ukrainian by preference, anything else English")
    func languages() {
        #expect(ReportLanguage.preferred(acceptLanguage: "uk-UA,uk;q=0.9,en;q=0.8") == .uk)
        #expect(ReportLanguage.preferred(acceptLanguage: "de-DE,uk;q=0.5") == .uk)
        #expect(ReportLanguage.preferred(acceptLanguage: "de-DE,fr;q=0.5") == .en)
        #expect(ReportLanguage.preferred(acceptLanguage: "en;q=0.1,uk;q=0.9") == .uk)
        #expect(ReportLanguage.preferred(acceptLanguage: nil) == .en)
    }

    @Test("shape: sentences, words and tips are counted as a reader would")
    func shape() {
        #expect(ReportShape.sentences("One. Two! Three?") == 3)
        #expect(ReportShape.sentences("Mr Smith waited… Then he left.") == 2)
        #expect(ReportShape.sentences("Сонце в Тельці. Місяць у Козерозі.") == 2)
        let sections = ReportSections(keyInfluences: "One sentence only.", detailedAnalysis: "word", recommendations: ["a", "b"])
        #expect(ReportShape.problems(sections, language: .en).count >= 3)
    }
}
