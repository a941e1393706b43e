import Foundation
import LanternCore
import LanternLLM
import LanternTestSupport
import Testing

@Suite("LLM router against fake Gemini and OpenAI-compatible servers")
struct RouterTests {
    @Test("Gemini: the real request shape, and a clean STOP answer is the text")
    func geminiRequestShape() async throws {
        let fake = FakeLLMServers()
        try await withProviders(fake) { gemini, _ in
            let router = try makeRouter(["gemini:gemini-2.5-flash"], providers: [gemini])
            let result = try await router.generate(fortuneRequest())
            #expect(result.text == FakeLLMServers.defaultText)
            #expect(result.source == .model(provider: "gemini", model: "gemini-2.5-flash") && result.attempts == 1 && !result.source.isLocal)
            let request = try #require(fake.received.first)
            #expect(request.headers["x-goog-api-key"] == fake.apiKey)
            let json = try #require(request.json)
            let config = try #require(json["generationConfig"] as? [String: Any])
            #expect(config["maxOutputTokens"] as? Int == 256)
            #expect((config["thinkingConfig"] as? [String: Any])?["thinkingBudget"] as? Int == 0)
            #expect(request.system.contains("fortune-cookie"))
            #expect(request.prompt.contains("Chinese zodiac animal: Horse") && request.prompt.contains("Day master: Yang Metal"))
        }
    }

    @Test("Gemini 3 flash gets thinkingLevel minimal; JSON and enum outputs ask for their MIME types and schemas")
    func geminiOutputModes() async throws {
        let fake = FakeLLMServers()
        fake.script("gemini-3-flash-preview", .ok("{\"mood\":\"calm\"}"), .ok("calm"))
        try await withProviders(fake) { gemini, _ in
            let router = try makeRouter(["gemini:gemini-3-flash-preview"], providers: [gemini])
            let schema = JSONValue.object(["type": .string("object"), "properties": .object(["mood": .object(["type": .string("string")])])])
            let json = try await router.generate(fortuneRequest(format: .json(schema: schema)))
            #expect(json.text == "{\"mood\":\"calm\"}")
            let choice = try await router.generate(fortuneRequest(format: .choice(["calm", "tense"])))
            #expect(choice.text == "calm")
            let configs = fake.received.compactMap { $0.json?["generationConfig"] as? [String: Any] }
            #expect((configs[0]["thinkingConfig"] as? [String: Any])?["thinkingLevel"] as? String == "minimal")
            #expect(configs[0]["responseMimeType"] as? String == "application/json" && configs[0]["responseJsonSchema"] != nil)
            #expect(configs[1]["responseMimeType"] as? String == "text/x.enum")
            #expect((configs[1]["responseSchema"] as? [String: Any])?["enum"] as? [String] == ["calm", "tense"])
        }
    }

    @Test("429 with RetryInfo: waits retryDelay, then the same model answers")
    func rateLimitHonoured() async throws {
        let fake = FakeLLMServers()
        fake.script("m", .rateLimited(retryAfterSeconds: 0.3), .ok())
        try await withProviders(fake) { gemini, _ in
            let router = try makeRouter(["gemini:m", "local"], providers: [gemini])
            let result = try await router.generate(fortuneRequest())
            #expect(result.source == .model(provider: "gemini", model: "m") && result.attempts == 2)
            let times = fake.received.map(\.receivedAt)
            #expect(times[1].timeIntervalSince(times[0]) >= 0.3, "retried before the provider's retryDelay")
        }
    }

    @Test("429 whose retryDelay does not fit the budget: no wait, the next model now, and the model is skipped until then")
    func rateLimitTooLong() async throws {
        let fake = FakeLLMServers()
        fake.script("a", .rateLimited(retryAfterSeconds: 40))
        try await withProviders(fake) { gemini, _ in
            let router = try makeRouter(["gemini:a", "gemini:b"], providers: [gemini])
            let first = try await router.generate(fortuneRequest())
            #expect(first.source == .model(provider: "gemini", model: "b") && first.attempts == 2)
            let second = try await router.generate(fortuneRequest())
            #expect(second.source == .model(provider: "gemini", model: "b"))
            #expect(fake.received(model: "a").count == 1, "a model that said 'wait 40 s' was called again")
            #expect(second.fallbacks.first?.contains("cooling down") == true)
        }
    }

    @Test("500, 503 and 504 are retried on the same model", arguments: [500, 503, 504])
    func serverErrorsRetried(code: Int) async throws {
        let fake = FakeLLMServers()
        fake.script("m", .serverError(code), .serverError(code), .ok())
        try await withProviders(fake) { gemini, _ in
            var policy = RouterPolicy()
            policy.retryBackoff = .milliseconds(20)
            let router = try makeRouter(["gemini:m"], providers: [gemini], policy: policy)
            let result = try await router.generate(fortuneRequest())
            #expect(result.attempts == 3 && result.source == .model(provider: "gemini", model: "m"))
        }
    }

    @Test("never retried: 400, a wrong key, SAFETY, a blocked prompt, MAX_TOKENS with no text, RECITATION — the next model answers",
          arguments: [FakeLLMServers.Behaviour.badRequest, .badKey, .safety, .promptBlocked, .maxTokensEmpty, .recitation])
    func notRetried(behaviour: FakeLLMServers.Behaviour) async throws {
        let fake = FakeLLMServers()
        fake.script("a", behaviour)
        try await withProviders(fake) { gemini, _ in
            let router = try makeRouter(["gemini:a", "gemini:b"], providers: [gemini])
            let result = try await router.generate(fortuneRequest())
            #expect(result.source == .model(provider: "gemini", model: "b"))
            #expect(fake.received(model: "a").count == 1)
            #expect(result.fallbacks.count == 1)
        }
    }

    @Test("a model slower than the budget: the local generator answers within the budget")
    func slowModelFallsBackInTime() async throws {
        let fake = FakeLLMServers()
        // The model answers only when the test is over: waiting for it would never return. (The budget's
        // precision is measured by `make bench`.)
        fake.script("m", .hang)
        try await withProviders(fake) { gemini, _ in
            let router = try makeRouter(["gemini:m", "local"], providers: [gemini])
            let result = try await router.generate(fortuneRequest(budget: .milliseconds(400)))
            #expect(result.source == .local && result.source.isLocal)
            #expect(result.fallbacks.first?.hasPrefix("gemini:m: timeout") == true, "\(result.fallbacks)")
        }
    }

    @Test("cool-down: after repeated failures a model is skipped without a call, then probed once the cool-down is over")
    func coolDown() async throws {
        let fake = FakeLLMServers()
        fake.script("sick", .serverError(503))
        let time = ManualTime()
        try await withProviders(fake) { gemini, _ in
            var policy = RouterPolicy()
            policy.attemptsPerModel = 1
            policy.coolDownFailures = 2
            policy.coolDown = .seconds(60)
            let router = try makeRouter(["gemini:sick", "gemini:well"], providers: [gemini], policy: policy, clock: .manual(time))
            for _ in 0..<2 { _ = try await router.generate(fortuneRequest()) }
            #expect(fake.received(model: "sick").count == 2)
            let skipped = try await router.generate(fortuneRequest())
            #expect(skipped.source == .model(provider: "gemini", model: "well") && skipped.attempts == 1)
            #expect(fake.received(model: "sick").count == 2, "a cooling model was called")
            time.advance(by: 61)
            fake.script("sick", .ok())
            let probed = try await router.generate(fortuneRequest())
            #expect(probed.source == .model(provider: "gemini", model: "sick"))
        }
    }

    @Test("the exact cache answers an identical cacheable request without a call; uncached requests always call")
    func exactCache() async throws {
        let fake = FakeLLMServers()
        try await withProviders(fake) { gemini, _ in
            let router = try makeRouter(["gemini:m"], providers: [gemini])
            let first = try await router.generate(fortuneRequest(cacheable: true))
            let second = try await router.generate(fortuneRequest(cacheable: true))
            #expect(!first.cached && second.cached && second.text == first.text && second.attempts == 0)
            // The seed is not part of what a model sees: only another prompt is another request.
            _ = try await router.generate(fortuneRequest(cacheable: true, day: "2026-11-24"))
            _ = try await router.generate(fortuneRequest(cacheable: true, descriptors: [Descriptor("animal", "Chinese zodiac animal", "Rat")]))
            _ = try await router.generate(fortuneRequest())
            _ = try await router.generate(fortuneRequest())
            #expect(fake.received.count == 4, "one cached call, one other prompt, two uncached")
        }
    }

    @Test("a provider at its concurrency limit: a caller that cannot wait for a slot falls back")
    func concurrencyLimit() async throws {
        let fake = FakeLLMServers()
        fake.script("m", .hang)
        try await withProviders(fake) { gemini, _ in
            var policy = RouterPolicy()
            policy.maxConcurrency = 1
            let router = try makeRouter(["gemini:m", "local"], providers: [gemini], policy: policy)
            let first = Task { try await router.generate(fortuneRequest(budget: .seconds(60))) }
            // The first call holds the only slot once the model has its request (and until it is cancelled).
            #expect(try await eventually { fake.received.count == 1 })
            let second = try await router.generate(fortuneRequest(budget: .milliseconds(300)))
            #expect(second.source == .local)
            #expect(second.fallbacks.first?.contains("busy") == true, "\(second.fallbacks)")
            #expect(fake.received.count == 1)
            first.cancel()
            #expect(try await first.value.source == .local)
        }
    }

    @Test("an over-long answer is cut at the last whole sentence that fits; with no whole sentence it falls back")
    func overLong() async throws {
        let sentences = "The river knows the way. " + String(repeating: "Patience is a lantern in a long corridor. ", count: 5)
        let noSentence = String(repeating: "and the wind keeps turning ", count: 10)
        let fake = FakeLLMServers()
        fake.script("long", .ok(sentences))
        fake.script("run-on", .ok(noSentence))
        try await withProviders(fake) { gemini, _ in
            let cut = try await makeRouter(["gemini:long"], providers: [gemini]).generate(fortuneRequest())
            #expect(cut.text.count <= 200 && cut.text.hasSuffix(".") && sentences.hasPrefix(cut.text))
            let fallback = try await makeRouter(["gemini:run-on", "local"], providers: [gemini]).generate(fortuneRequest())
            #expect(fallback.source == .local && fallback.text.count <= 200)
        }
    }

    @Test("an answer in the wrong language is refused and the next step answers")
    func wrongLanguage() async throws {
        let fake = FakeLLMServers()
        fake.script("m", .ok("Il tuo biscotto è pronto: oggi la pazienza ti porta lontano, e il vento è dalla tua parte."))
        try await withProviders(fake) { gemini, _ in
            let result = try await makeRouter(["gemini:m", "local"], providers: [gemini]).generate(fortuneRequest())
            #expect(result.source == .local)
            #expect(result.fallbacks.first?.contains("guard_rejected") == true)
        }
    }

    @Test("OpenAI-compatible: bearer key, system and user messages, max_tokens; 429 Retry-After, content_filter and length")
    func openAICompatible() async throws {
        let fake = FakeLLMServers()
        fake.script("qwen", .rateLimited(retryAfterSeconds: 0.2), .ok())
        fake.script("filtered", .safety)
        fake.script("cut", .maxTokensEmpty)
        try await withProviders(fake) { _, openAI in
            let router = try makeRouter(["openai:qwen"], providers: [openAI])
            let result = try await router.generate(fortuneRequest())
            #expect(result.text == FakeLLMServers.defaultText && result.attempts == 2)
            let request = try #require(fake.received.first)
            #expect(request.headers["authorization"] == "Bearer \(fake.openAIKey)")
            #expect(request.json?["max_tokens"] as? Int == 256)
            #expect(request.system.contains("fortune-cookie") && request.prompt.contains("Horse"))
            let times = fake.received.map(\.receivedAt)
            #expect(times[1].timeIntervalSince(times[0]) >= 0.2)
            let fallback = try await makeRouter(["openai:filtered", "openai:cut", "local"], providers: [openAI]).generate(fortuneRequest())
            #expect(fallback.source == .local && fallback.fallbacks.count == 2)
            #expect(fallback.fallbacks[0].contains("blocked") && fallback.fallbacks[1].contains("truncated"))
            let choice = try await makeRouter(["openai:pick"], providers: [openAI]).generate(fortuneRequest(format: .choice([FakeLLMServers.defaultText, "no"])))
            #expect(choice.text == FakeLLMServers.defaultText)
        }
    }

    @Test("a prompt holding a birth date, a time or coordinates never leaves: the local generator answers")
    func privacyGuardStopsPrompt() async throws {
        let fake = FakeLLMServers()
        try await withProviders(fake) { gemini, _ in
            let router = try makeRouter(["gemini:m", "local"], providers: [gemini])
            for leaked in ["1990-05-17", "born at 14:35", "50.4501, 30.5234", "ada@example.com"] {
                let request = fortuneRequest(descriptors: [Descriptor("animal", "Chinese zodiac animal", "Horse"),
                                                           Descriptor("element", "Day master", "Yang Metal"),
                                                           Descriptor("birth", "Birth", leaked)])
                let result = try await router.generate(request)
                #expect(result.source == .local)
                #expect(result.fallbacks.first?.contains("privacy") == true)
            }
            #expect(fake.received.isEmpty)
        }
    }

    @Test("with no local step and every model failing, the caller learns why")
    func unavailable() async throws {
        let fake = FakeLLMServers()
        fake.script("a", .badRequest)
        try await withProviders(fake) { gemini, _ in
            let router = LLMRouter(routes: [:], defaultRoute: [.model(provider: "gemini", model: "a")], providers: [gemini],
                                   local: LocalGenerator(grammars: [:]))
            await #expect(throws: TextUnavailable.self) { try await router.generate(fortuneRequest()) }
        }
    }

    @Test("the fake servers catch personal data in a prompt that reaches them")
    func fakeCatchesLeaks() async throws {
        let fake = FakeLLMServers()
        fake.forbid("Ada Lovelace")
        await #expect(throws: FakeLLMServers.PromptLeak.self) {
            try await withProviders(fake) { gemini, _ in
                // Straight to the provider, past the router's guard: the fake still sees the name.
                let request = fortuneRequest(descriptors: [Descriptor("name", "Name", "Ada Lovelace")])
                _ = try await gemini.generate(request, model: "m", timeout: .seconds(30))
            }
        }
    }
}
