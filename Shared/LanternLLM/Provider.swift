import Foundation

/// A remote text model behind one wire format (Gemini, OpenAI-compatible). One instance per configured provider;
/// the model is chosen per call, so one client serves every task.
public protocol LLMProvider: Sendable {
    /// The provider's name in configuration and metrics (`gemini`, `openai`).
    var name: String { get }
    /// One attempt, no retries (the router decides those); throws `ProviderFailure`. `timeout` bounds the whole
    /// exchange, body included.
    func generate(_ request: LLMRequest, model: String, timeout: Duration) async throws -> ProviderAnswer
}

/// A provider's answer before the output guard has judged it.
public struct ProviderAnswer: Sendable {
    public var text: String
    public var usage: TokenUsage
    public init(text: String, usage: TokenUsage = TokenUsage()) {
        self.text = text
        self.usage = usage
    }
}

/// Tokens of one call, as the provider counted them (Gemini's `usageMetadata`, OpenAI's `usage`).
public struct TokenUsage: Sendable, Equatable {
    public var prompt: Int
    public var output: Int
    /// Thinking tokens (Gemini's `thoughtsTokenCount`), billed as output.
    public var thoughts: Int
    public init(prompt: Int = 0, output: Int = 0, thoughts: Int = 0) {
        self.prompt = prompt
        self.output = output
        self.thoughts = thoughts
    }
}

/// Why an attempt failed, and whether trying the same model again can help.
public struct ProviderFailure: Error, Sendable, CustomStringConvertible {
    public enum Reason: String, Sendable, CaseIterable {
        /// 429: quota or rate limit; retried after the provider's delay when the budget allows.
        case rateLimited = "rate_limited"
        /// 500, 502, 503, 504: the provider's fault, retried.
        case unavailable
        /// No complete answer within the attempt's time.
        case timeout
        /// Connection refused or reset, TLS: retried.
        case transport
        /// 400, 404, 422…: this request will not work on this model; not retried.
        case rejected
        /// 401, 403: the key is wrong; not retried.
        case unauthorized
        /// The prompt or the answer was blocked (Gemini's `blockReason`, `SAFETY`, `PROHIBITED_CONTENT`, OpenAI's
        /// `content_filter`, a refusal).
        case blocked
        /// Stopped by the token limit with no usable text (`MAX_TOKENS`, `length`).
        case truncated
        /// `RECITATION`, `LANGUAGE` or another stop that is not a clean end.
        case unusable
        /// A body that is not the provider's format.
        case malformed
        /// The answer came but failed the output guard (too long, wrong language, blocklisted).
        case guardRejected = "guard_rejected"
        /// The privacy guard refused to send the prompt.
        case privacy
    }

    public var reason: Reason
    public var detail: String
    /// The provider's own wait (`RetryInfo.retryDelay`, `Retry-After`), when it gave one.
    public var retryAfter: Duration?

    public init(_ reason: Reason, _ detail: String, retryAfter: Duration? = nil) {
        self.reason = reason
        self.detail = detail
        self.retryAfter = retryAfter
    }

    /// Worth another attempt on the same model: the fault is the provider's or the moment's, not the request's.
    public var isRetryable: Bool {
        switch reason {
        case .rateLimited, .unavailable, .timeout, .transport: true
        default: false
        }
    }

    /// Counts towards a model's cool-down: it says the model is sick, not that one request was bad.
    public var countsAgainstModel: Bool {
        switch reason {
        case .rateLimited, .unavailable, .timeout, .transport, .unauthorized, .malformed: true
        default: false
        }
    }

    public var description: String { "\(reason.rawValue): \(detail)" }

    /// The failure an HTTP status means, with the provider's wait.
    static func status(_ code: Int, detail: String, retryAfter: Duration?) -> ProviderFailure {
        switch code {
        case 429: ProviderFailure(.rateLimited, detail, retryAfter: retryAfter)
        case 401, 403: ProviderFailure(.unauthorized, detail)
        case 408: ProviderFailure(.timeout, detail)
        case 500...599: ProviderFailure(.unavailable, detail, retryAfter: retryAfter)
        default: ProviderFailure(.rejected, detail)
        }
    }
}

