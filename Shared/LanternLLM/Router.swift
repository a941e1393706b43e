import Foundation
import LanternCore
import Logging
import Metrics

/// One step of a task's fallback list: a model of a configured provider, or the local generator.
public enum RouteStep: Sendable, Hashable, CustomStringConvertible {
    case model(provider: String, model: String)
    case local

    /// `gemini:gemini-2.5-flash`, `openai:qwen2.5-7b-instruct`, `local` (the form configuration uses).
    public init?(_ text: String) {
        let text = text.trimmingWhitespace()
        if text == "local" { self = .local; return }
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let provider = String(text[..<colon]), model = String(text[text.index(after: colon)...])
        guard !provider.isEmpty, !model.isEmpty else { return nil }
        self = .model(provider: provider, model: model)
    }

    public var description: String {
        switch self {
        case .model(let provider, let model): "\(provider):\(model)"
        case .local: "local"
        }
    }
}

/// How the router treats failures and load.
public struct RouterPolicy: Sendable {
    /// Attempts on one model (the first included) before the next step, budget permitting.
    public var attemptsPerModel = 3
    /// Wait before a retry when the provider named none: doubling from this.
    public var retryBackoff: Duration = .milliseconds(200)
    /// Failures in a row that put a model in cool-down, and for how long.
    public var coolDownFailures = 3
    public var coolDown: Duration = .seconds(30)
    /// Calls in flight per provider.
    public var maxConcurrency = 16
    /// Exact-cache entries, and their age limit.
    public var cacheEntries = 1_000
    public var cacheMaxAge: Duration = .seconds(86_400)
    /// Time kept back from remote attempts so a local step later in the list still answers within the budget.
    public var localReserve: Duration = .milliseconds(25)

    public init() {}
}

/// No step of the task's list produced an acceptable text in time (only when the list has no `local` step).
public struct TextUnavailable: Error, CustomStringConvertible {
    public var task: String
    public var reasons: [String]
    public var description: String { "no text for \(task): \(reasons.joined(separator: "; "))" }
}

/// Sends each request down its task's fallback list within the request's budget.
///
/// For each model step: skip it if it is cooling down; wait for a slot of its provider (bounded); call it; judge
/// the answer with the output guard; on a retryable failure (429, 5xx, timeout, transport) wait the provider's
/// delay or a backoff and try again, but only when the wait and another attempt still fit in the budget; on any
/// other failure move on. Remote calls stop `localReserve` before the deadline when a local step follows, so the
/// local generator answers in time. The privacy guard runs once per request, before any remote call.
public final class LLMRouter: Sendable {
    let routes: [String: [RouteStep]]
    let defaultRoute: [RouteStep]
    let providers: [String: any LLMProvider]
    let limits: [String: ConcurrencyLimit]
    let local: LocalGenerator
    let outputGuard: OutputGuard
    let privacy: PrivacyGuard
    let policy: RouterPolicy
    let health: ModelHealth
    let cache: ResponseCache
    let budget: ModelCallBudget
    let logger: Logger

    public init(routes: [String: [RouteStep]], defaultRoute: [RouteStep], providers: [any LLMProvider], local: LocalGenerator,
                policy: RouterPolicy = RouterPolicy(), outputGuard: OutputGuard = OutputGuard(), privacy: PrivacyGuard = PrivacyGuard(),
                budget: ModelCallBudget = .unlimited, clock: WallClock = .system, logger: Logger = Logger(label: "llm")) {
        self.routes = routes
        self.defaultRoute = defaultRoute
        self.providers = Dictionary(providers.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.limits = Dictionary(providers.map { ($0.name, ConcurrencyLimit(limit: policy.maxConcurrency)) }, uniquingKeysWith: { first, _ in first })
        self.local = local
        self.outputGuard = outputGuard
        self.privacy = privacy
        self.policy = policy
        self.health = ModelHealth(failures: policy.coolDownFailures, coolDown: policy.coolDown.inSeconds, clock: clock)
        self.cache = ResponseCache(capacity: policy.cacheEntries, maxAge: policy.cacheMaxAge.inSeconds, clock: clock)
        self.budget = budget
        self.logger = logger
    }

    /// The steps a task goes through.
    public func route(for task: String) -> [RouteStep] { routes[task] ?? defaultRoute }

    public func generate(_ request: LLMRequest) async throws -> GeneratedText {
        let started = ContinuousClock.now
        let deadline = started + request.budget
        let steps = route(for: request.task)
        let key = request.cacheable ? request.cacheKey : nil
        if let key, let (text, source) = cache.text(for: key) {
            RouterMetrics.text(task: request.task, source: "cache")
            return GeneratedText(text: text, source: source, cached: true, attempts: 0, fallbacks: [])
        }
        var fallbacks: [String] = []
        var attempts = 0
        // The privacy guard protects what leaves the process: checked before the first model, never for a text the
        // local grammar writes (a third of a local roast's CPU went to it).
        var privacyFailure: ProviderFailure?
        var privacyChecked = false
        // The account's daily model calls (`ModelCallBudget`): counted once, just before the first call it would make.
        var budgetSpent: Bool?

        for (index, step) in steps.enumerated() {
            let reserve = steps[(index + 1)...].contains(.local) ? policy.localReserve : .zero
            switch step {
            case .local:
                do {
                    let text = try outputGuard.check(try local.generate(request), format: request.format, rules: request.rules)
                    RouterMetrics.text(task: request.task, source: "local")
                    if !fallbacks.isEmpty { RouterMetrics.fallback(task: request.task, to: "local") }
                    return GeneratedText(text: text, source: .local, cached: false, attempts: attempts, fallbacks: fallbacks)
                } catch {
                    fallbacks.append("local: \(error)")
                }
            case .model(let providerName, let model):
                let label = step.description
                if !privacyChecked {
                    privacyChecked = true
                    do { try privacy.check(request) } catch let failure as ProviderFailure { privacyFailure = failure }
                }
                if let privacyFailure {
                    RouterMetrics.failure(provider: providerName, model: model, task: request.task, reason: privacyFailure.reason)
                    fallbacks.append("\(label): \(privacyFailure)")
                    logger.error("prompt refused by the privacy guard", metadata: ["task": "\(request.task)", "finding": "\(privacyFailure.detail)"])
                    continue
                }
                guard let provider = providers[providerName], let limit = limits[providerName] else {
                    fallbacks.append("\(label): provider not configured")
                    continue
                }
                if let until = health.skippedUntil(label) {
                    RouterMetrics.skipped(provider: providerName, model: model, task: request.task, reason: "cooling_down")
                    fallbacks.append("\(label): cooling down until \(until.ISO8601Format())")
                    continue
                }
                if let account = request.account, budgetSpent == nil { budgetSpent = !(await budget.spend(account: account)) }
                if budgetSpent == true {
                    RouterMetrics.skipped(provider: providerName, model: model, task: request.task, reason: "account_budget")
                    fallbacks.append("\(label): the account's model calls for today are spent")
                    continue
                }
                let outcome = await attempt(request, provider: provider, model: model, label: label, limit: limit,
                                            until: deadline - reserve, attempts: &attempts)
                switch outcome {
                case .success(let text):
                    if let key { cache.store(text, source: .model(provider: providerName, model: model), for: key) }
                    RouterMetrics.text(task: request.task, source: "model")
                    if !fallbacks.isEmpty { RouterMetrics.fallback(task: request.task, to: label) }
                    return GeneratedText(text: text, source: .model(provider: providerName, model: model), cached: false,
                                         attempts: attempts, fallbacks: fallbacks)
                case .failure(let reason):
                    fallbacks.append("\(label): \(reason)")
                }
            }
        }
        throw TextUnavailable(task: request.task, reasons: fallbacks)
    }

    private enum Outcome {
        case success(String)
        case failure(String)
    }

    /// Tries one model until it answers, fails for good, or its time (`until`) is spent.
    private func attempt(_ request: LLMRequest, provider: any LLMProvider, model: String, label: String, limit: ConcurrencyLimit,
                         until: ContinuousClock.Instant, attempts: inout Int) async -> Outcome {
        var backoff = Backoff(initial: policy.retryBackoff, maximum: .seconds(5))
        var lastFailure = "no time left"
        for attempt in 1...max(1, policy.attemptsPerModel) {
            let remaining = until - .now
            guard remaining > .milliseconds(1) else { return .failure(attempt == 1 ? "no time left" : lastFailure) }
            guard await limit.acquire(timeout: remaining) else {
                RouterMetrics.skipped(provider: provider.name, model: model, task: request.task, reason: "busy")
                return .failure("\(provider.name) busy (\(limit.limit) calls in flight)")
            }
            attempts += 1
            let callStarted = ContinuousClock.now
            let result: Result<ProviderAnswer, ProviderFailure>
            do {
                result = .success(try await provider.generate(request, model: model, timeout: until - .now))
            } catch let failure as ProviderFailure {
                result = .failure(failure)
            } catch {
                result = .failure(ProviderFailure(.transport, "\(error)"))
            }
            limit.release()
            RouterMetrics.duration(provider: provider.name, model: model, task: request.task, ContinuousClock.now - callStarted)

            var failure: ProviderFailure
            switch result {
            case .success(let answer):
                RouterMetrics.tokens(provider: provider.name, model: model, task: request.task, answer.usage)
                do {
                    let text = try outputGuard.check(answer.text, format: request.format, rules: request.rules)
                    health.succeeded(label)
                    RouterMetrics.call(provider: provider.name, model: model, task: request.task, outcome: "ok")
                    return .success(text)
                } catch let rejection as ProviderFailure {
                    failure = rejection
                } catch {
                    failure = ProviderFailure(.guardRejected, "\(error)")
                }
            case .failure(let providerFailure):
                failure = providerFailure
            }
            RouterMetrics.failure(provider: provider.name, model: model, task: request.task, reason: failure.reason)
            lastFailure = failure.description
            logger.warning("LLM call failed", metadata: ["model": "\(label)", "task": "\(request.task)", "attempt": "\(attempt)",
                                                         "reason": "\(failure.reason.rawValue)", "detail": "\(failure.detail)"])
            let wait = failure.retryAfter ?? backoff.next()
            // A wait the caller cannot afford: skip the model for everyone until the provider's time has come.
            let fits = ContinuousClock.now + wait + .milliseconds(50) < until
            if failure.countsAgainstModel { health.failed(label, retryAfter: fits ? nil : failure.retryAfter) }
            guard failure.isRetryable, attempt < policy.attemptsPerModel, fits else { return .failure(lastFailure) }
            try? await Task.sleep(for: wait)
        }
        return .failure(lastFailure)
    }
}

/// The router's metrics (swift-metrics; `/metrics` shows them): per provider, model and task.
enum RouterMetrics {
    static func call(provider: String, model: String, task: String, outcome: String) {
        Counter(label: "lantern_llm_calls_total", dimensions: [("provider", provider), ("model", model), ("task", task), ("outcome", outcome)]).increment()
    }
    static func failure(provider: String, model: String, task: String, reason: ProviderFailure.Reason) {
        call(provider: provider, model: model, task: task, outcome: reason.rawValue)
    }
    static func skipped(provider: String, model: String, task: String, reason: String) {
        Counter(label: "lantern_llm_skipped_total", dimensions: [("provider", provider), ("model", model), ("task", task), ("reason", reason)]).increment()
    }
    static func fallback(task: String, to step: String) {
        Counter(label: "lantern_llm_fallbacks_total", dimensions: [("task", task), ("to", step)]).increment()
    }
    static func text(task: String, source: String) {
        Counter(label: "lantern_llm_texts_total", dimensions: [("task", task), ("source", source)]).increment()
    }
    static func duration(provider: String, model: String, task: String, _ duration: Duration) {
        Timer(label: "lantern_llm_call_duration_seconds", dimensions: [("provider", provider), ("model", model), ("task", task)])
            .recordNanoseconds(duration.nanoseconds)
    }
    static func tokens(provider: String, model: String, task: String, _ usage: TokenUsage) {
        for (kind, count) in [("prompt", usage.prompt), ("output", usage.output), ("thoughts", usage.thoughts)] where count > 0 {
            Counter(label: "lantern_llm_tokens_total", dimensions: [("provider", provider), ("model", model), ("task", task), ("kind", kind)])
                .increment(by: count)
        }
    }
}

/// Anything that turns a request into a text: the LLM router in a service, a stand-in in a test.
public protocol TextGenerator: Sendable {
    func generate(_ request: LLMRequest) async throws -> GeneratedText
}

extension LLMRouter: TextGenerator {}
