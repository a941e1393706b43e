import Foundation
import LanternCore

/// The embedded default: composes a text from curated phrases and the request's descriptors, with no network and
/// no credentials, so every app works on a plain `make up` and when every model is down.
///
/// A `Grammar` per task (a service's catalogue file) expands `start`; each `{slot}` is a rule of the grammar
/// (one alternative drawn) or a descriptor's key (its value); `{rule@key}` takes the rule `rule.<value of key>`
/// when the grammar has one (`{image@element}` → `image.Metal`), else `rule`. Draws come from `SplitMix64` seeded by the
/// request's `GenerationSeed`, so a user gets the same text all day and another one tomorrow, on any machine and
/// any Swift version (never `Hasher` or `SystemRandomNumberGenerator`, whose output is not stable).
public struct LocalGenerator: Sendable {
    public let grammars: [String: Grammar]

    public init(grammars: [String: Grammar]) { self.grammars = grammars }

    /// How many expansions are drawn looking for one that passes the length limit before the shortest is taken.
    static let draws = 12

    public func generate(_ request: LLMRequest) throws -> String {
        var random = SplitMix64(seed: request.seed.state)
        if case .choice(let options) = request.format {
            guard !options.isEmpty else { throw ProviderFailure(.rejected, "no options") }
            return options[Int(random.next(below: UInt64(options.count)))]
        }
        guard let grammar = grammars[request.task] else { throw ProviderFailure(.rejected, "no local grammar for \(request.task)") }
        let values = Dictionary(request.descriptors.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        var shortest: String?
        for _ in 0..<Self.draws {
            let text = try grammar.expand(values: values, pinned: request.pinned, random: &random)
            if let limit = request.rules.maxCharacters, text.count > limit {
                if shortest.map({ text.count < $0.count }) ?? true { shortest = text }
                continue
            }
            return text
        }
        guard let shortest, request.rules.maxCharacters.map({ shortest.count <= $0 }) ?? true else {
            throw ProviderFailure(.guardRejected, "no expansion within \(request.rules.maxCharacters ?? 0) characters")
        }
        return shortest
    }
}

/// Rules of curated phrases: `start` and named alternatives with `{slot}`s (see `LocalGenerator`).
public struct Grammar: Sendable, Decodable {
    public let rules: [String: [String]]

    public init(rules: [String: [String]]) throws {
        self.rules = rules
        try validate()
    }

    public init(from decoder: any Decoder) throws {
        try self.init(rules: try decoder.singleValueContainer().decode([String: [String]].self))
    }

    /// Loads a grammar file (a JSON object: rule name → alternatives).
    public static func load(_ url: URL) throws -> Grammar {
        try JSONDecoder().decode(Grammar.self, from: Data(contentsOf: url))
    }

    /// The slots a text may hold that are not rules: the descriptor keys the grammar expects.
    public var descriptorKeys: Set<String> {
        Set(rules.values.joined().flatMap(Self.slots).flatMap { slot -> [String] in
            guard let at = slot.firstIndex(of: "@") else { return rules[slot] == nil ? [slot] : [] }
            return [String(slot[slot.index(after: at)...])]
        })
    }

    /// The rules a slot may expand to: `rule` alone, or for `rule@key` every `rule.<value>` and `rule`.
    func rulesReached(by slot: String) -> [String] {
        guard let at = slot.firstIndex(of: "@") else { return rules[slot] == nil ? [] : [slot] }
        let base = String(slot[..<at])
        return rules.keys.filter { $0 == base || $0.hasPrefix(base + ".") }
    }

    /// How many alternatives the grammar holds, over all its rules.
    public var alternativeCount: Int { rules.values.reduce(0) { $0 + $1.count } }

    func validate() throws {
        guard let start = rules["start"], !start.isEmpty else { throw GrammarError("a grammar needs a non-empty `start`") }
        if let empty = rules.first(where: { $0.value.isEmpty }) { throw GrammarError("rule `\(empty.key)` has no alternatives") }
        for slot in Set(rules.values.joined().flatMap(Self.slots)) {
            if let at = slot.firstIndex(of: "@"), rules[String(slot[..<at])] == nil {
                throw GrammarError("`{\(slot)}` needs a rule `\(slot[..<at])` for values without their own rule")
            }
        }
        // A rule that can reach itself could expand forever.
        var state: [String: Bool] = [:]  // false: on the path, true: done
        func visit(_ rule: String, path: [String]) throws {
            if state[rule] == true { return }
            if state[rule] == false { throw GrammarError("rules refer to themselves: \((path + [rule]).joined(separator: " → "))") }
            state[rule] = false
            for alternative in rules[rule] ?? [] {
                for slot in Self.slots(alternative) {
                    for reached in rulesReached(by: slot) { try visit(reached, path: path + [rule]) }
                }
            }
            state[rule] = true
        }
        for rule in rules.keys.sorted() { try visit(rule, path: []) }
    }

    func expand(values: [String: String], pinned: [String: Int] = [:], random: inout SplitMix64) throws -> String {
        try expand("start", values: values, pinned: pinned, random: &random)
            .replacing("  ", with: " ").trimmingWhitespace()
    }

    private func expand(_ rule: String, values: [String: String], pinned: [String: Int], random: inout SplitMix64) throws -> String {
        guard let alternatives = rules[rule] else { throw GrammarError("no rule `\(rule)`") }
        // A pinned rule still draws, so the rest of the text does not depend on whether it was pinned.
        let drawn = Int(random.next(below: UInt64(alternatives.count)))
        let chosen = alternatives[pinned[rule].map { (($0 % alternatives.count) + alternatives.count) % alternatives.count } ?? drawn]
        var output = ""
        var rest = Substring(chosen)
        while let open = rest.firstIndex(of: "{") {
            output += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else { throw GrammarError("unclosed { in `\(chosen)`") }
            var slot = String(rest[rest.index(after: open)..<close])
            if let at = slot.firstIndex(of: "@") {
                let base = String(slot[..<at]), key = String(slot[slot.index(after: at)...])
                guard let value = values[key] else { throw GrammarError("no descriptor `\(key)` for `\(chosen)`") }
                slot = rules[base + "." + value] != nil ? base + "." + value : base
            }
            if rules[slot] != nil {
                output += try expand(slot, values: values, pinned: pinned, random: &random)
            } else if let value = values[slot] {
                output += value
            } else {
                throw GrammarError("no descriptor `\(slot)` for `\(chosen)`")
            }
            rest = rest[rest.index(after: close)...]
        }
        return output + rest
    }

    static func slots(_ text: String) -> [String] {
        text.matches(of: /\{([^{}]+)\}/).map { String($0.1) }
    }
}

public struct GrammarError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Steele, Lea and Flood's SplitMix64 (2014): a tiny generator whose output is fixed by its definition, so seeded
/// texts stay the same across machines and releases.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform draw from 0..<bound (Lemire's method would be faster; rejection keeps it obviously unbiased).
    public mutating func next(below bound: UInt64) -> UInt64 {
        precondition(bound > 0)
        let limit = UInt64.max - UInt64.max % bound
        while true {
            let value = next()
            if value < limit { return value % bound }
        }
    }
}
