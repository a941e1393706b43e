import AsyncHTTPClient
import Foundation
import LanternCore
import LanternRedis
import Logging

/// The LLM layer's configuration, read and validated at start-up. Model ids live here only, never in code.
///
/// - `LLM_MODELS`: the default fallback list, e.g. `gemini:gemini-2.5-flash,gemini:gemini-2.5-flash-lite,local`;
///   `LLM_MODELS_<TASK>` overrides it for one task (`LLM_MODELS_FORTUNE`). Unset: `local` only, so a stack with no
///   credentials works. `local` is always the last step, added when a list leaves it out.
/// - `GEMINI_API_KEY` (and `GEMINI_BASE_URL`, default Google's), `OPENAI_BASE_URL` (with its `/v1`) and
///   `OPENAI_API_KEY` for OpenAI-compatible servers. A list naming a provider that is not configured is refused.
/// - `LLM_ATTEMPTS_PER_MODEL`, `LLM_COOLDOWN_FAILURES`, `LLM_COOLDOWN_SECONDS`, `LLM_MAX_CONCURRENCY`,
///   `LLM_CACHE_ENTRIES`: the router's policy.
/// - `LLM_CALLS_PER_ACCOUNT_PER_DAY` (default 50, 0 for none): model calls one account may cause in a UTC day; past
///   it the account's texts come from the local generator (`ModelCallBudget`).
public struct LLMConfiguration: Sendable {
    public var defaultRoute: [RouteStep]
    public var routes: [String: [RouteStep]]
    public var gemini: (baseURL: String, apiKey: String)?
    public var openAI: (baseURL: String, apiKey: String?)?
    public var policy: RouterPolicy
    /// `LLM_CALLS_PER_ACCOUNT_PER_DAY`; 0 for no limit.
    public var callsPerAccountPerDay: Int

    public static let geminiURL = "https://generativelanguage.googleapis.com"

    /// - Parameter tasks: the tasks the service runs; each may have its own `LLM_MODELS_<TASK>`.
    public init(settings: Settings, tasks: [String]) throws {
        if let key = try settings.secret("gemini.api.key") {
            gemini = (try settings.url("gemini.base.url", default: Self.geminiURL, schemes: ["https", "http"]).absoluteString, key)
        }
        if settings.string("openai.base.url") != nil {
            openAI = (try settings.url("openai.base.url", schemes: ["https", "http"]).absoluteString, try settings.secret("openai.api.key"))
        }
        var configured: Set<String> = []
        if gemini != nil { configured.insert("gemini") }
        if openAI != nil { configured.insert("openai") }
        func route(_ key: String) throws -> [RouteStep]? {
            let items = settings.list(key)
            guard !items.isEmpty else { return nil }
            var steps: [RouteStep] = []
            for item in items {
                guard let step = RouteStep(item) else {
                    throw ConfigurationError(variable: Settings.variableName(key), message: "has '\(item)'; expected provider:model or local")
                }
                if case .model(let provider, _) = step, !configured.contains(provider) {
                    throw ConfigurationError(variable: Settings.variableName(key),
                                             message: "names \(provider), which is not configured (\(provider == "gemini" ? "GEMINI_API_KEY" : "OPENAI_BASE_URL"))")
                }
                if !steps.contains(step) { steps.append(step) }
            }
            if let local = steps.firstIndex(of: .local) { steps.removeSubrange((local + 1)...) } else { steps.append(.local) }
            return steps
        }
        defaultRoute = try route("llm.models") ?? [.local]
        var routes: [String: [RouteStep]] = [:]
        for task in tasks {
            if let steps = try route("llm.models.\(task)") { routes[task] = steps }
        }
        self.routes = routes
        var policy = RouterPolicy()
        policy.attemptsPerModel = try settings.int("llm.attempts.per.model", default: policy.attemptsPerModel, range: 1...10)
        policy.coolDownFailures = try settings.int("llm.cooldown.failures", default: policy.coolDownFailures, range: 1...1_000)
        policy.coolDown = try settings.duration("llm.cooldown.seconds", default: policy.coolDown.inSeconds, range: 0...3_600)
        policy.maxConcurrency = try settings.int("llm.max.concurrency", default: policy.maxConcurrency, range: 1...10_000)
        policy.cacheEntries = try settings.int("llm.cache.entries", default: policy.cacheEntries, range: 0...1_000_000)
        self.policy = policy
        callsPerAccountPerDay = try settings.int("llm.calls.per.account.per.day", default: 50, range: 0...1_000_000)
    }

    /// The router over the configured providers and the service's local grammars; with `redis`, the accounts' daily
    /// model calls are counted there (`ModelCallBudget`, keys under `prefix`).
    public func makeRouter(local: LocalGenerator, http: HTTPClient = .shared, redis: RedisClient? = nil, prefix: String = "lantern",
                           clock: WallClock = .system, logger: Logger) -> LLMRouter {
        var providers: [any LLMProvider] = []
        if let gemini { providers.append(GeminiProvider(baseURL: gemini.baseURL, apiKey: gemini.apiKey, http: http)) }
        if let openAI { providers.append(OpenAICompatibleProvider(baseURL: openAI.baseURL, apiKey: openAI.apiKey, http: http)) }
        let budget = redis.map { ModelCallBudget(callsPerDay: callsPerAccountPerDay, redis: $0, prefix: prefix, clock: clock, logger: logger) }
        return LLMRouter(routes: routes, defaultRoute: defaultRoute, providers: providers, local: local, policy: policy,
                         budget: budget ?? .unlimited, clock: clock, logger: logger)
    }
}
