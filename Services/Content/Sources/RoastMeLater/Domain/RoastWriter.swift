import Foundation
import LanternLLM

/// A roast ready to be kept.
struct WrittenRoast: Sendable, Equatable {
    var text: String
    /// No model wrote it.
    var artisanal: Bool
    /// `gemini:…`, `openai:…` or `local`.
    var source: String
    /// A model's answer named someone and was set aside for the local grammar's.
    var refusedName: Bool = false
}

/// Writes a roast (REQ-MOD, §1 of the issue): a model within the budget, else the local grammar, which answers in
/// microseconds and says so (`artisanal`). The prompt holds only the catalogue's words for the category, spice and
/// mood — never free text from the user, never who they are — and the answer must name no one (`NameGuard`).
struct RoastWriter: Sendable {
    let generator: any TextGenerator
    let local: LocalGenerator

    static let maxCharacters = 220
    static let version = "roast-v1"

    static func system(_ language: RoastLanguage) -> String {
        """
        You write one short roast for RoastMeLater, an app where people laugh at their own workplace situations. \
        At most \(maxCharacters) characters, one to three sentences, in \(language.textLanguage.englishName). Speak to the \
        reader as "you". Roast the situation, never the person: nothing about gender, age, ethnicity, religion, \
        nationality, body, looks, health, disability, sexuality or family; no real people and no names of people or \
        companies; no slurs, no profanity; no hashtags, emoji or quotation marks.
        """
    }

    /// What the model is told, and what the local grammar draws its rules by (`category`, `heat`, `mood`, `language`).
    static func descriptors(_ order: RoastOrder, taste: RoastTaste = .none) -> [Descriptor] {
        var descriptors = [
            Descriptor("category", "Category", order.category.id),
            Descriptor("about", "What the category is about", order.category.prompt),
            Descriptor("spice", "Spice level (1 gentle to 5 savage)", String(order.spice.level)),
            Descriptor("heat", "Heat", taste.heat(for: order.spice)),
            Descriptor("tone", "How sharp", order.spice.modifier),
            Descriptor("mood", "The reader's mood", order.mood?.id ?? "none"),
            Descriptor("language", "Language", order.language.rawValue),
        ]
        if let mood = order.mood { descriptors.append(Descriptor("moodStyle", "Tone for that mood", mood.modifier)) }
        if let collection = order.collection, let scenario = order.scenario {
            descriptors.append(Descriptor("theme", "The collection's theme", collection.promptModifier))
            descriptors.append(Descriptor("scenario", "The situation to roast", scenario.prompt))
        }
        return descriptors + taste.descriptors
    }

    func request(_ order: RoastOrder, taste: RoastTaste = .none, user: UUID, roast: UUID, budget: Duration) -> LLMRequest {
        var request = LLMRequest(
            task: "roast", system: Self.system(order.language),
            instruction: (order.scenario == nil ? "Write one roast about the category below" : "Write one roast about the situation below, in the collection's theme")
                + (order.mood == nil ? ", as sharp as its spice level says." : ", as sharp as its spice level says, in the tone the reader's mood asks for."),
            descriptors: Self.descriptors(order, taste: taste),
            rules: OutputRules(maxCharacters: Self.maxCharacters, language: order.language.textLanguage),
            seed: GenerationSeed("roastmelater", user.uuidString.lowercased(), roast.uuidString.lowercased(), Self.version),
            maxOutputTokens: 160, temperature: 1.0, budget: budget)
        request.account = user.uuidString.lowercased()
        return request
    }

    /// A roast: from a model when one answers within `budget` and names no one, else artisanal.
    func write(_ order: RoastOrder, taste: RoastTaste = .none, user: UUID, roast: UUID, budget: Duration) async -> WrittenRoast {
        let request = request(order, taste: taste, user: user, roast: roast, budget: budget)
        var refusedName = false
        if let text = try? await generator.generate(request) {
            if text.source.isLocal { return WrittenRoast(text: text.text, artisanal: true, source: "local") }
            if NameGuard.name(in: text.text) == nil { return WrittenRoast(text: text.text, artisanal: false, source: text.source.label) }
            refusedName = true
        }
        var written = artisanal(order, taste: taste, user: user, roast: roast)
        written.refusedName = refusedName
        return written
    }

    /// The local grammar's roast for the same order.
    func artisanal(_ order: RoastOrder, taste: RoastTaste = .none, user: UUID, roast: UUID) -> WrittenRoast {
        let request = request(order, taste: taste, user: user, roast: roast, budget: .seconds(1))
        // The grammar's texts fit the limit by construction (a catalogue test expands them all).
        let text = (try? local.generate(request)) ?? Self.lastResort[order.language]
        return WrittenRoast(text: text, artisanal: true, source: "local")
    }

    static let lastResort = RoastNames(en: "Your calendar called. It wants a day off too.",
                                       vi: "Lịch làm việc của bạn vừa gọi. Nó cũng xin nghỉ phép một hôm.")
}

/// A roast names no one (the issue: "the output guard refuses slurs and names"; slurs are `OutputGuard`'s
/// blocklist). English and Vietnamese capitalise a word inside a sentence only when it is a name, so such a word
/// is taken for one — a person, a company — unless it is among the few a workplace roast writes that way.
enum NameGuard {
    static let allowed: Set<String> = [
        "I", "I'm", "I've", "I'd", "I'll", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
        "CEO", "HR", "IT", "CC", "CC'd", "OK", "AI", "PDF", "Wi-Fi", "WiFi", "Excel", "PowerPoint", "Zoom",
        "Tết", "Thứ", "Hai", "Ba", "Tư", "Năm", "Sáu", "Bảy", "Chủ", "Nhật",
    ]
    static let sentenceEnds: Set<Character> = [".", "!", "?", "…", ":", "\n"]

    /// The first word that reads as a name, if any.
    static func name(in text: String) -> String? {
        var sentenceStart = true
        var word = ""
        func finish() -> String? {
            defer { word = "" }
            guard let first = word.first else { return nil }
            let starts = sentenceStart
            sentenceStart = false
            let stem = word.hasSuffix("'s") ? String(word.dropLast(2)) : word
            if starts || !first.isUppercase || allowed.contains(stem) { return nil }
            return word
        }
        for character in text {
            if character.isLetter || character.isNumber || character == "-" || character == "'" || character == "’" {
                word.append(character == "’" ? "'" : character)
                continue
            }
            if let name = finish() { return name }
            if sentenceEnds.contains(character) { sentenceStart = true }
        }
        return finish()
    }
}
