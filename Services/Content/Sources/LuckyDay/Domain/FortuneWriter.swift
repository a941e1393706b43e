import ContentKit
import Foundation
import LanternCore
import LanternLLM

/// A fortune ready to be revealed.
struct WrittenFortune: Sendable, Equatable {
    var text: String
    /// No model wrote it.
    var artisanal: Bool
    /// `gemini:…`, `openai:…` or `local`.
    var source: String
    /// The user's position in their walk through the hand-written pool, when the text holds one of those.
    var poolPosition: Int?
}

/// Writes a user's fortune for a day (Req 2): a model within the budget, else the local grammar around the user's
/// next hand-written fortune. The prompt holds the profile's signs and the day's weekday and element, never a date.
struct FortuneWriter: Sendable {
    let generator: any TextGenerator
    let local: LocalGenerator
    /// Hand-written fortunes in the grammar's `core` rule.
    let poolSize: Int

    static let maxCharacters = 200
    static let version = "fortune-v1"

    static let system = """
        You write one fortune-cookie message in English for Lucky Day: at most 200 characters, one or two sentences; \
        reflective, witty, calm and slightly mystical. Speak to the reader as "you". No advice about health, \
        medicine, money or gambling; no questions back; no quotation marks, hashtags or emoji.
        """

    static func descriptors(_ profile: LuckyProfile, day: LocalDay) -> [Descriptor] {
        [
            Descriptor("animal", "Chinese zodiac animal", profile.zodiacAnimal),
            Descriptor("yearElement", "Element of the birth year", profile.yearElement),
            Descriptor("dayMaster", "Day master", profile.dayMaster),
            Descriptor("nickname", "Mystical nickname", profile.nickname),
            Descriptor("dominantElement", "Strongest element", LuckyProfile.dominantElement(in: profile.elements)),
            Descriptor("weakElement", "Weakest element", LuckyProfile.weakElement(in: profile.elements)),
            Descriptor("dayElement", "Element of today", day.element),
            Descriptor("weekday", "Weekday", day.weekday),
        ]
    }

    func request(_ profile: LuckyProfile, day: LocalDay, poolPosition: Int, budget: Duration) -> LLMRequest {
        var request = LLMRequest(
            task: "fortune", system: Self.system,
            instruction: "Write today's fortune for the reader described below; let the element of today colour it.",
            descriptors: Self.descriptors(profile, day: day),
            rules: OutputRules(maxCharacters: Self.maxCharacters, language: .english),
            seed: GenerationSeed("luckyday", profile.userID.uuidString.lowercased(), day.description, Self.version),
            maxOutputTokens: 120, temperature: 1.0, budget: budget)
        request.pinned = ["core": ArtisanalPool.index(for: profile.userID, position: poolPosition, count: poolSize)]
        request.account = profile.userID.uuidString.lowercased()
        return request
    }

    /// The day's fortune: from a model when one answers within `budget`, else artisanal.
    func write(_ profile: LuckyProfile, day: LocalDay, poolPosition: Int, budget: Duration) async -> WrittenFortune {
        let request = request(profile, day: day, poolPosition: poolPosition, budget: budget)
        if let text = try? await generator.generate(request), !text.source.isLocal {
            return WrittenFortune(text: text.text, artisanal: false, source: text.source.label, poolPosition: nil)
        }
        return artisanal(profile, day: day, poolPosition: poolPosition)
    }

    /// The hand-written fortune at the user's `poolPosition`, framed by the grammar.
    func artisanal(_ profile: LuckyProfile, day: LocalDay, poolPosition: Int) -> WrittenFortune {
        let request = request(profile, day: day, poolPosition: poolPosition, budget: .seconds(1))
        // The grammar's texts fit the limit by construction (a catalogue test checks); the core alone is the floor.
        let text = (try? local.generate(request)) ?? "Patience is a lantern: it lights more than your own path."
        return WrittenFortune(text: text, artisanal: true, source: "local", poolPosition: poolPosition)
    }
}
