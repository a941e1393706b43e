import Foundation
import LanternCore
import LanternLLM
import Testing

@Suite("LLM configuration")
struct ConfigurationTests {
    @Test("unset: local only, so a stack without credentials works")
    func defaults() throws {
        let configuration = try LLMConfiguration(settings: .fixed([:]), tasks: ["fortune"])
        #expect(configuration.defaultRoute == [.local] && configuration.routes.isEmpty)
        #expect(configuration.gemini == nil && configuration.openAI == nil)
    }

    @Test("lists per task, local appended when left out and cut after when given early")
    func routes() throws {
        let configuration = try LLMConfiguration(settings: .fixed([
            "GEMINI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1",
            "LLM_MODELS": "gemini:gemini-2.5-flash, gemini:gemini-2.5-flash-lite",
            "LLM_MODELS_PROFILE": "openai:qwen, local, gemini:x",
            "LLM_COOLDOWN_SECONDS": "12.5",
        ]), tasks: ["fortune", "profile"])
        #expect(configuration.defaultRoute == [.model(provider: "gemini", model: "gemini-2.5-flash"),
                                               .model(provider: "gemini", model: "gemini-2.5-flash-lite"), .local])
        #expect(configuration.routes["profile"] == [.model(provider: "openai", model: "qwen"), .local])
        #expect(configuration.routes["fortune"] == nil)
        #expect(configuration.gemini?.baseURL == LLMConfiguration.geminiURL)
        #expect(configuration.policy.coolDown == .milliseconds(12_500))
    }

    @Test("a list naming a provider that is not configured, or a malformed step, is refused naming the variable")
    func refused() {
        #expect { try LLMConfiguration(settings: .fixed(["LLM_MODELS_FORTUNE": "gemini:gemini-2.5-flash"]), tasks: ["fortune"]) } throws: {
            ($0 as? ConfigurationError)?.variable == "LLM_MODELS_FORTUNE"
        }
        #expect { try LLMConfiguration(settings: .fixed(["GEMINI_API_KEY": "k", "LLM_MODELS": "gemini-2.5-flash"]), tasks: []) } throws: {
            ($0 as? ConfigurationError)?.variable == "LLM_MODELS"
        }
        #expect { try LLMConfiguration(settings: .fixed(["OPENAI_BASE_URL": "ftp://x"]), tasks: []) } throws: {
            ($0 as? ConfigurationError)?.variable == "OPENAI_BASE_URL"
        }
    }
}
