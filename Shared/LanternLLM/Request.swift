import Crypto
import Foundation
import LanternCore

/// One piece of what a prompt may say about a person: a named, synthesised description ("zodiac animal":
/// "Horse", "day master": "Yang Metal"), never a raw birth date, place or name.
///
/// Prompts are made only of descriptors, a task instruction and a system instruction, so the privacy review of a
/// prompt is the review of its descriptors; `PrivacyGuard` checks the rendered text before it leaves.
public struct Descriptor: Sendable, Hashable, Codable {
    /// The slot a local grammar fills with it (`animal`).
    public var key: String
    /// How a prompt names it (`Chinese zodiac animal`).
    public var label: String
    public var value: String
    public init(_ key: String, _ label: String, _ value: String) {
        self.key = key
        self.label = label
        self.value = value
    }
}

/// What the answer must look like.
public enum OutputFormat: Sendable, Equatable {
    /// Plain prose.
    case text
    /// A JSON object matching the schema (JSON Schema), asked of providers that support it.
    case json(schema: JSONValue)
    /// Exactly one of these strings.
    case choice([String])
}

/// The languages Lantern writes in (Lucky Day: English; AstroSvitla: English and Ukrainian; RoastMeLater adds
/// Vietnamese).
public enum TextLanguage: String, Sendable, Hashable, Codable, CaseIterable {
    case english = "en"
    case ukrainian = "uk"
    case vietnamese = "vi"

    /// The language's English name, as prompts say it.
    public var englishName: String {
        switch self {
        case .english: "English"
        case .ukrainian: "Ukrainian"
        case .vietnamese: "Vietnamese"
        }
    }
}

/// The rules an answer must pass before anyone sees it (`OutputGuard`).
public struct OutputRules: Sendable, Hashable {
    /// Most user-visible characters (grapheme clusters), nil for no limit.
    public var maxCharacters: Int?
    public var language: TextLanguage
    public init(maxCharacters: Int? = nil, language: TextLanguage = .english) {
        self.maxCharacters = maxCharacters
        self.language = language
    }
}

/// The seed of the local generator: SHA-256 of the parts that make a text personal and stable (app, user, local
/// date, version), so the same user on the same day gets the same words and the next day different ones.
public struct GenerationSeed: Sendable, Hashable {
    public let bytes: [UInt8]

    public init(_ parts: String...) { self.init(parts: parts) }

    public init(parts: [String]) {
        // A unit separator between parts: ("ab", "c") and ("a", "bc") must not collide.
        bytes = Array(SHA256.hash(data: Data(parts.joined(separator: "\u{1F}").utf8)))
    }

    /// The first 8 bytes, big-endian: the starting state of `SplitMix64`.
    public var state: UInt64 { bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) } }
}

/// One request for a text: what the task is, what the model is told, and how the answer is judged.
public struct LLMRequest: Sendable {
    /// The task's name (`fortune`, `profile`, `report`…): chooses the models (`LLM_MODELS_<TASK>`) and labels metrics.
    public var task: String
    /// The system instruction: tone, length, language, format. Same for every user of a task.
    public var system: String
    /// What to write, without anything personal (the descriptors carry that).
    public var instruction: String
    public var descriptors: [Descriptor]
    public var format: OutputFormat
    public var rules: OutputRules
    /// Seed of the local generator; also why two users with equal descriptors still get different texts.
    public var seed: GenerationSeed
    public var maxOutputTokens: Int
    public var temperature: Double
    /// The whole time the caller will wait, every attempt and fallback included.
    public var budget: Duration
    /// Whether an identical request may be answered from the cache (off when each answer must be new).
    public var cacheable: Bool
    /// Choices the local generator must make, by rule (`fortune` → the user's next unused hand-written fortune),
    /// taken modulo the rule's alternatives; remote providers never see them.
    public var pinned: [String: Int] = [:]
    /// The account the text is for, when it counts against the account's daily model calls (`ModelCallBudget`);
    /// nil for texts that do not (a purchased report). Never sent to a provider and not part of the cache key.
    public var account: String?

    public init(task: String, system: String, instruction: String, descriptors: [Descriptor], format: OutputFormat = .text,
                rules: OutputRules = OutputRules(), seed: GenerationSeed, maxOutputTokens: Int = 256, temperature: Double = 0.9,
                budget: Duration, cacheable: Bool = false) {
        self.task = task
        self.system = system
        self.instruction = instruction
        self.descriptors = descriptors
        self.format = format
        self.rules = rules
        self.seed = seed
        self.maxOutputTokens = maxOutputTokens
        self.temperature = temperature
        self.budget = budget
        self.cacheable = cacheable
    }

    /// The user turn every remote provider receives: the instruction, then one `name: value` line per descriptor.
    public var prompt: String {
        ([instruction, ""] + descriptors.map { "\($0.label): \($0.value)" }).joined(separator: "\n")
    }

    /// The key of the exact cache: everything that shapes the answer.
    var cacheKey: String {
        var parts = [task, system, prompt, pinned.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","), String(maxOutputTokens), String(temperature), rules.language.rawValue,
                     String(rules.maxCharacters ?? -1)]
        switch format {
        case .text: parts.append("text")
        case .json(let schema): parts.append("json:" + schema.canonicalText)
        case .choice(let options): parts.append("choice:" + options.joined(separator: "\u{1F}"))
        }
        return SHA256.hash(data: Data(parts.joined(separator: "\u{1E}").utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

/// Where a text came from: a model of a provider, the cache of one, or the local generator.
public enum TextSource: Sendable, Hashable {
    case model(provider: String, model: String)
    case local

    /// True for the local generator: Lucky Day shows such a fortune as "artisanal".
    public var isLocal: Bool { self == .local }

    public var label: String {
        switch self {
        case .model(let provider, let model): "\(provider):\(model)"
        case .local: "local"
        }
    }
}

/// A finished text.
public struct GeneratedText: Sendable {
    public var text: String
    public var source: TextSource
    /// Answered from the exact cache, without a call.
    public var cached: Bool
    /// Provider calls made (retries included), 0 for the local generator or the cache.
    public var attempts: Int
    /// Why each model before the one that answered was passed over, in order (`gemini:…: timeout`).
    public var fallbacks: [String]
}

extension JSONValue {
    /// The value as JSON with sorted keys: equal values, equal text (cache keys).
    var canonicalText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}
