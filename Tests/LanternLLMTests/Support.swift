import Foundation
import LanternCore
import LanternLLM
import LanternTestSupport

/// A fortune-like request: English, at most 200 characters, from descriptors only. The default budget is generous:
/// tests that are not about the budget must not depend on how loaded the machine is.
func fortuneRequest(budget: Duration = .seconds(30), task: String = "fortune", cacheable: Bool = false,
                    descriptors: [Descriptor]? = nil, format: OutputFormat = .text, day: String = "2026-11-23") -> LLMRequest {
    LLMRequest(task: task, system: "You write one short fortune-cookie message in English: calm, witty, slightly mystical.",
               instruction: "Write today's fortune for a person described below.",
               descriptors: descriptors ?? [Descriptor("animal", "Chinese zodiac animal", "Horse"),
                                            Descriptor("element", "Day master", "Yang Metal")],
               format: format, rules: OutputRules(maxCharacters: 200, language: .english),
               seed: GenerationSeed("luckyday", "user-1", day, "v1"), budget: budget, cacheable: cacheable)
}

/// A small grammar for the `fortune` task.
func fortuneGrammar() throws -> Grammar {
    try Grammar(rules: [
        "start": ["{opening} {core}", "{core} {closing}"],
        "opening": ["The {animal} in you stirs today.", "Your {element} heart is steady."],
        "core": ["A small kindness returns to you twice.", "Patience opens the door that force cannot.",
                 "What you plant quietly will surprise you loudly."],
        "closing": ["Walk gently.", "Smile at the unexpected."],
    ])
}

func makeRouter(_ route: [String], providers: [any LLMProvider], policy: RouterPolicy = RouterPolicy(),
                clock: WallClock = .system) throws -> LLMRouter {
    LLMRouter(routes: [:], defaultRoute: route.compactMap(RouteStep.init), providers: providers,
              local: LocalGenerator(grammars: ["fortune": try fortuneGrammar()]), policy: policy, clock: clock)
}

/// Runs the fakes with a Gemini and an OpenAI-compatible provider pointed at them.
func withProviders<T: Sendable>(_ fake: FakeLLMServers,
                                _ body: @Sendable (GeminiProvider, OpenAICompatibleProvider) async throws -> T) async throws -> T {
    try await fake.run { gemini, openAI in
        try await body(GeminiProvider(baseURL: gemini, apiKey: fake.apiKey),
                       OpenAICompatibleProvider(baseURL: openAI, apiKey: fake.openAIKey))
    }
}
