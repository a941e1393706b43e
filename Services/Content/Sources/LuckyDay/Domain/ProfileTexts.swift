import Foundation
import LanternCore
import LanternLLM

/// The nickname, the four pillar poems and the 3-line essence of a profile (Req 3.4, 3.5, 4.3): one JSON answer
/// of a model, checked part by part; any part missing or unfit is written by the local grammars instead.
struct ProfileTexts: Sendable {
    let generator: any TextGenerator
    let local: LocalGenerator
    let budget: Duration

    struct Texts: Sendable, Equatable {
        var nickname: String
        var poems: [String: String]  // role → poem
        var essence: [String]
        var artisanal: Bool
    }

    static let system = """
        You write for Lucky Day, a calm fortune-cookie app inspired by Chinese astrology. Write in English only: \
        reflective, warm, slightly mystical, never prescriptive, no advice about health or money. \
        Answer with one JSON object matching the schema.
        """

    static let schema = JSONValue.object([
        "type": .string("object"),
        "properties": .object([
            "nickname": .object(["type": .string("string"), "description": .string("an evocative adjective, then the element and animal given, e.g. Quiet Metal Horse")]),
            "poems": .object([
                "type": .string("object"),
                "properties": .object(Dictionary(uniqueKeysWithValues: ["year", "month", "day", "hour"].map {
                    ($0, JSONValue.object(["type": .string("string"), "description": .string("one or two poetic sentences, at most 180 characters")]))
                })),
            ]),
            "essence": .object(["type": .string("array"), "items": .object(["type": .string("string")]), "minItems": .number(3), "maxItems": .number(3)]),
        ]),
        "required": .array([.string("nickname"), .string("poems"), .string("essence")]),
    ])

    /// What every text of a profile may say about its owner: signs and elements, nothing else.
    static func descriptors(_ reading: BaziReading) -> [Descriptor] {
        var list = [
            Descriptor("animal", "Chinese zodiac animal", reading.zodiacAnimal),
            Descriptor("yearElement", "Element of the birth year", reading.yearElement),
            Descriptor("dayMaster", "Day master", "\(reading.dayMaster.polarity) \(reading.dayMaster.element)"),
        ]
        for pillar in reading.pillars {
            list.append(Descriptor("\(pillar.role)Pillar", "\(pillar.role.capitalized) pillar (\(pillar.meaning))",
                                   "\(pillar.polarity) \(pillar.stemElement) \(pillar.stem) over \(pillar.branch) (\(pillar.branchElement) \(pillar.animal))"))
        }
        let balance = LuckyProfile.order.map { "\($0) \(reading.elements[$0] ?? 0)" }.joined(separator: ", ")
        list.append(Descriptor("balance", "Element balance", balance))
        return list
    }

    /// - Parameters:
    ///   - seedParts: what makes the texts this profile's own (app, user, profile version).
    ///   - account: whose model calls the texts count against (`ModelCallBudget`).
    func write(for reading: BaziReading, seedParts: [String], account: String) async -> Texts {
        let seed = GenerationSeed(parts: seedParts)
        var request = LLMRequest(
            task: "profile", system: Self.system,
            instruction: """
                Write a mystical nickname (one adjective, then "\(reading.yearElement) \(reading.zodiacAnimal)"), a poetic description \
                of each of the four pillars (year = Destiny, month = Environment, day = Essence, hour = Inner Heart) and a \
                three-line zodiac essence joining the sign and the pillars, for the person described below.
                """,
            descriptors: Self.descriptors(reading), format: .json(schema: Self.schema),
            rules: OutputRules(language: .english), seed: seed, maxOutputTokens: 700, temperature: 0.9, budget: budget)
        request.account = account
        let remote = try? await generator.generate(request)
        let parsed = remote.flatMap { $0.source.isLocal ? nil : Self.parse($0.text, reading: reading) }
        var texts = Texts(nickname: parsed?.nickname ?? "", poems: parsed?.poems ?? [:], essence: parsed?.essence ?? [], artisanal: parsed == nil)
        // Each part the model did not give (or gave unfit) comes from the grammars.
        var values = Dictionary(Self.descriptors(reading).map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
        if texts.nickname.isEmpty {
            texts.nickname = (try? local.generate(localRequest("nickname", values: values, seed: seed))) ?? "\(reading.yearElement) \(reading.zodiacAnimal)"
            texts.artisanal = true
        }
        values["nickname"] = texts.nickname
        for pillar in reading.pillars where texts.poems[pillar.role] == nil {
            var pillarValues = values
            pillarValues["role"] = pillar.role.capitalized
            pillarValues["meaning"] = pillar.meaning
            pillarValues["polarity"] = pillar.polarity
            pillarValues["stemElement"] = pillar.stemElement
            pillarValues["branchAnimal"] = pillar.animal
            pillarValues["branchElement"] = pillar.branchElement
            texts.poems[pillar.role] = (try? local.generate(localRequest("pillar-poem", values: pillarValues,
                                                                            seed: GenerationSeed(parts: seedParts + [pillar.role]))))
                ?? "\(pillar.polarity) \(pillar.stemElement) over the \(pillar.animal)."
            texts.artisanal = true
        }
        if texts.essence.count != 3 {
            var essenceValues = values
            essenceValues["dominantElement"] = LuckyProfile.dominantElement(in: reading.elements)
            essenceValues["weakElement"] = LuckyProfile.weakElement(in: reading.elements)
            let text = (try? local.generate(localRequest("essence", values: essenceValues, seed: seed))) ?? ""
            let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            texts.essence = lines.count == 3 ? lines : ["The \(reading.zodiacAnimal) walks its own road.",
                                                        "\(reading.dayMaster.polarity) \(reading.dayMaster.element) at the core.",
                                                        "Balance comes in its own season."]
            texts.artisanal = true
        }
        return texts
    }

    private func localRequest(_ task: String, values: [String: String], seed: GenerationSeed) -> LLMRequest {
        LLMRequest(task: task, system: "", instruction: "", descriptors: values.map { Descriptor($0.key, $0.key, $0.value) }.sorted { $0.key < $1.key },
                   rules: OutputRules(maxCharacters: 220, language: .english), seed: seed, budget: .seconds(1))
    }

    /// The model's JSON, keeping only the parts that pass: a nickname of one or two words before the element and
    /// animal, poems of at most 200 characters in English, exactly three essence lines of at most 100.
    static func parse(_ text: String, reading: BaziReading) -> Texts? {
        struct Answer: Decodable {
            var nickname: String?
            var poems: [String: String]?
            var essence: [String]?
        }
        guard let answer = try? JSONDecoder().decode(Answer.self, from: Data(text.utf8)) else { return nil }
        let guardian = OutputGuard()
        func clean(_ text: String?, _ limit: Int) -> String? {
            guard let text else { return nil }
            return try? guardian.check(text, format: .text, rules: OutputRules(maxCharacters: limit, language: .english))
        }
        var texts = Texts(nickname: "", poems: [:], essence: [], artisanal: false)
        let sign = "\(reading.yearElement) \(reading.zodiacAnimal)"
        if let nickname = clean(answer.nickname, 40), nickname.hasSuffix(sign),
           nickname.dropLast(sign.count).split(separator: " ").count == 1 {
            texts.nickname = nickname
        }
        for pillar in reading.pillars {
            if let poem = clean(answer.poems?[pillar.role], 200) { texts.poems[pillar.role] = poem }
        }
        let lines = (answer.essence ?? []).compactMap { clean($0, 100) }
        if lines.count == 3 { texts.essence = lines }
        return texts
    }
}
