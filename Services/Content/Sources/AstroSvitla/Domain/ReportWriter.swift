import Foundation
import LanternCore
import LanternLLM

/// Writes a report (FR-027–FR-035): the matched rules, in the report's language, go to the model as the
/// foundation; its JSON answer must have the shape `ReportShape` asks for. Out of shape → one more try told what
/// was wrong; then, or when the budget runs out (10 s from the request's arrival, FR-031), the local composition of
/// the same rules.
struct ReportWriter: Sendable {
    let generator: any TextGenerator
    let composer: ReportComposer
    let budget: Duration
    /// How many matched rules a prompt lists (the strongest).
    static let promptRules = 14

    struct Written: Sendable {
        var sections: ReportSections
        /// `local`, or `provider:model`.
        var source: String
        /// Model answers asked for (0 when every model was skipped).
        var attempts: Int
        /// Why earlier answers were not used.
        var rejected: [String]
    }

    static let system = """
        You are the astrologer of AstroSvitla, an app of natal chart reports. You write one report about one life area, \
        grounded in the expert interpretations you are given for the person's own chart placements: use them as the \
        foundation, connect them, be specific to these placements, warm and practical, in the second person. No \
        fatalism, no certainty about events, no medical, legal or investment advice. Answer with one JSON object matching \
        the schema: keyInfluences (2 or 3 sentences on the dominant factors), detailedAnalysis (400 to 500 words, \
        paragraphs separated by a blank line) and recommendations (3 or 4 practical tips, one sentence each).
        """

    static let schema = JSONValue.object([
        "type": .string("object"),
        "properties": .object([
            "keyInfluences": .object(["type": .string("string"), "description": .string("2 or 3 sentences")]),
            "detailedAnalysis": .object(["type": .string("string"), "description": .string("400 to 500 words")]),
            "recommendations": .object(["type": .string("array"), "items": .object(["type": .string("string")]),
                                        "minItems": .number(3), "maxItems": .number(4)]),
        ]),
        "required": .array([.string("keyInfluences"), .string("detailedAnalysis"), .string("recommendations")]),
    ])

    /// What a prompt says about a person: the placements' names and the rules' texts, nothing else (no birth data,
    /// no degrees — `PrivacyGuard` would refuse them).
    static func descriptors(area: LifeArea, language: ReportLanguage, matches: [MatchedRule]) -> [Descriptor] {
        matches.prefix(promptRules).enumerated().map { index, match in
            let strength = match.tightness >= 0.75 ? ", close" : match.tightness > 0 && match.tightness < 0.35 ? ", wide" : ""
            return Descriptor("rule\(index + 1)", "\(match.label(.en)) (weight \(match.rule.weight)\(strength))",
                              match.rule.areas[area]?[language] ?? match.rule.headline[language])
        }
    }

    /// Time kept back from the models for composing locally and storing the report.
    static let reserve = Duration.milliseconds(400)

    /// - Parameter deadline: when the report must be written by, whoever wrote it.
    func write(area: LifeArea, areaTitle: String, language: ReportLanguage, matches: [MatchedRule], others: [MatchedRule],
               timeKnown: Bool, deadline: ContinuousClock.Instant, seed: GenerationSeed) async -> Written {
        var rejected: [String] = []
        var attempts = 0
        var correction = ""
        for _ in 1...2 {
            let left = min(budget, deadline - ContinuousClock.now) - Self.reserve
            guard left > .milliseconds(300) else { rejected.append("budget spent"); break }
            let timeNote = timeKnown ? "" : " The birth time is unknown: houses, the Ascendant and the MC are not used; say so once."
            let request = LLMRequest(
                task: "report", system: Self.system,
                instruction: """
                    Write the "\(areaTitle)" report in \(language.textLanguage.englishName) for the person whose natal chart has \
                    the placements below, each with its interpretation for this area, strongest first.\(timeNote)\(correction)
                    """,
                descriptors: Self.descriptors(area: area, language: language, matches: matches), format: .json(schema: Self.schema),
                rules: OutputRules(language: language.textLanguage), seed: seed, maxOutputTokens: 3000, temperature: 0.7, budget: left)
            let answer: GeneratedText
            do { answer = try await generator.generate(request) } catch {
                rejected.append("\(error)")
                break
            }
            // The router's own last step is the local generator, which has no grammar for reports: a local answer
            // means every model failed, and the composition below is the answer.
            guard !answer.source.isLocal else { rejected.append(contentsOf: answer.fallbacks); break }
            attempts += max(1, answer.attempts)
            guard let sections = Self.parse(answer.text) else {
                rejected.append("\(answer.source.label): not the report's JSON")
                correction = " Your previous answer was not the JSON object of the schema."
                continue
            }
            let problems = ReportShape.problems(sections, language: language)
            if problems.isEmpty { return Written(sections: sections, source: answer.source.label, attempts: attempts, rejected: rejected) }
            rejected.append("\(answer.source.label): \(problems.joined(separator: "; "))")
            correction = " Your previous answer was refused: \(problems.joined(separator: "; ")). Keep exactly to the lengths."
        }
        let sections = composer.compose(area: area, language: language, matches: matches, others: others, timeKnown: timeKnown, seed: seed)
        return Written(sections: sections, source: "local", attempts: attempts, rejected: rejected)
    }

    static func parse(_ text: String) -> ReportSections? {
        guard var sections = try? JSONDecoder().decode(ReportSections.self, from: Data(text.utf8)) else { return nil }
        sections.keyInfluences = sections.keyInfluences.trimmingCharacters(in: .whitespacesAndNewlines)
        sections.detailedAnalysis = sections.detailedAnalysis.trimmingCharacters(in: .whitespacesAndNewlines)
        sections.recommendations = sections.recommendations.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        return sections
    }
}
