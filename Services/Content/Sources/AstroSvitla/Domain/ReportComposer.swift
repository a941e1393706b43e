import Foundation
import LanternLLM

/// A report's three sections (FR-028).
struct ReportSections: Codable, Sendable, Equatable {
    /// 2–3 sentences on the dominant factors.
    var keyInfluences: String
    /// 400–500 words on the chosen area, paragraphs separated by a blank line.
    var detailedAnalysis: String
    /// 3–4 actionable tips.
    var recommendations: [String]
}

/// The framing texts and tips of the local composition (`Catalogue/astrosvitla/tips.json`).
struct ReportTexts: Decodable, Sendable {
    /// area → chart point → tips.
    var tips: [String: [String: [Localized]]]
    var intros: [String: [Localized]]
    var closings: [String: [Localized]]
    var timeUnknown: Localized
}

/// The shape every report must have before anyone sees it, whoever wrote it (FR-028, FR-030).
enum ReportShape {
    static let keyInfluenceSentences = 2...3
    static let analysisWords = 400...500
    static let recommendationCount = 3...4

    static func words(_ text: String) -> Int { text.split(whereSeparator: \.isWhitespace).count }

    /// Sentences end at . ! ? … followed by white space or the end of the text.
    static func sentences(_ text: String) -> Int {
        let characters = Array(text.trimmingCharacters(in: .whitespacesAndNewlines))
        var count = 0
        for (i, c) in characters.enumerated() where ".!?…".contains(c) {
            let next = i + 1 < characters.count ? characters[i + 1] : " "
            if next.isWhitespace || (next == "\"" || next == "”" || next == "»") && i + 2 >= characters.count { count += 1 }
        }
        return count
    }

    /// Why `sections` cannot be shown, or an empty list.
    static func problems(_ sections: ReportSections, language: ReportLanguage) -> [String] {
        var problems: [String] = []
        let key = sentences(sections.keyInfluences)
        if !keyInfluenceSentences.contains(key) { problems.append("keyInfluences has \(key) sentences, not 2–3") }
        let analysis = words(sections.detailedAnalysis)
        if !analysisWords.contains(analysis) { problems.append("detailedAnalysis has \(analysis) words, not 400–500") }
        let tips = sections.recommendations.filter { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
        if !recommendationCount.contains(tips.count) || tips.count != sections.recommendations.count {
            problems.append("recommendations has \(sections.recommendations.count) tips, not 3–4")
        }
        if sections.recommendations.contains(where: { $0.count > 400 }) { problems.append("a recommendation is over 400 characters") }
        let all = ([sections.keyInfluences, sections.detailedAnalysis] + sections.recommendations).joined(separator: "\n")
        if let problem = LanguageCheck.problem(all, expected: language.textLanguage) { problems.append("language: \(problem)") }
        if let hit = Blocklist.standard.firstHit(in: all) { problems.append("blocklisted: \(hit)") }
        return problems
    }
}

/// The report written from the matched rules' own texts, with no model (FR-029): the default stack's writer and
/// every model's fallback. Same chart, area and language → same words (the seed is made of them).
struct ReportComposer: Sendable {
    let texts: ReportTexts

    /// - Parameters:
    ///   - matches: the rules for `area`, strongest first (`RuleMatcher`).
    ///   - others: every rule the chart matches, strongest first: what fills an analysis that is still short.
    func compose(area: LifeArea, language: ReportLanguage, matches: [MatchedRule], others: [MatchedRule], timeKnown: Bool,
                 seed: GenerationSeed) -> ReportSections {
        var random = SplitMix64(seed: seed.state)
        func pick<T>(_ list: [T]) -> T? { list.isEmpty ? nil : list[Int(random.next() % UInt64(list.count))] }

        // Key influences: the strongest placements' headlines, three when they fit.
        var key: [String] = []
        for match in matches {
            let candidate = key + [match.rule.headline[language]]
            if ReportShape.sentences(candidate.joined(separator: " ")) > 3 { continue }
            key = candidate
            if key.count == 3 { break }
        }

        // Detailed analysis: an opening, the area's texts of the matched rules by rank while they fit in 500
        // words with the closing, then (if still under 400) what the same placements say more broadly.
        let intro = pick(texts.intros[area.rawValue] ?? [])?[language]
        let closing = pick(texts.closings[area.rawValue] ?? [])?[language]
        var paragraphs = [timeKnown ? nil : texts.timeUnknown[language], intro].compactMap { $0 }
        let reserve = closing.map(ReportShape.words) ?? 0
        var total = paragraphs.map(ReportShape.words).reduce(0, +)
        var used = Set<String>()
        func add(_ text: String, id: String) {
            let count = ReportShape.words(text)
            guard !used.contains(id), total + count + reserve <= ReportShape.analysisWords.upperBound else { return }
            paragraphs.append(text)
            total += count
            used.insert(id)
        }
        for match in matches { if let text = match.rule.areas[area]?[language] { add(text, id: match.rule.id) } }
        if total + reserve < ReportShape.analysisWords.lowerBound {
            for match in others where total + reserve < ReportShape.analysisWords.lowerBound {
                if let text = (match.rule.areas[.general] ?? match.rule.areas.values.first)?[language] { add(text, id: match.rule.id) }
            }
        }
        if let closing { paragraphs.append(closing) }

        // Recommendations: tips for the points that lead the ranking, one per point first.
        var tips: [String] = []
        let points = matches.map(\.point).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        for round in 0..<3 where tips.count < 4 {
            for point in points where tips.count < 4 {
                let options = texts.tips[area.rawValue]?[point] ?? []
                guard !options.isEmpty else { continue }
                let start = Int(random.next() % UInt64(options.count))
                let tip = options[(start + round) % options.count][language]
                if !tips.contains(tip) { tips.append(tip) }
            }
        }
        return ReportSections(keyInfluences: key.joined(separator: " "), detailedAnalysis: paragraphs.joined(separator: "\n\n"),
                              recommendations: tips)
    }
}
