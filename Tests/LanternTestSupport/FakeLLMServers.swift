import Foundation
import HTTPTypes
import Hummingbird
import LanternLLM
import NIOCore
import Synchronization

/// A fake Gemini API and a fake OpenAI-compatible server on one loopback port, speaking the real wire formats and
/// answering with the real error bodies, so the providers' clients are tested as they run in production.
///
/// Each model answers by its script (`script(_:_:)`), one behaviour per request, the last repeated; unscripted
/// models answer `.ok`. Every prompt that arrives is checked for personal data (the `PrivacyGuard` patterns and
/// the literals of `forbid(_:)`: names, places, ids a test used); `run` fails the test when any prompt held some.
public final class FakeLLMServers: Sendable {
    /// How a model answers one request.
    public enum Behaviour: Sendable {
        /// A clean answer (Gemini `finishReason: STOP`, OpenAI `finish_reason: stop`) with this text, or a default one.
        case ok(String? = nil)
        /// The answer after a delay (a slow model).
        case slow(Duration, String? = nil)
        /// No answer until the fakes stop (a model far slower than any budget); tests assert order, not time.
        case hang
        /// 429 with Gemini's `RetryInfo.retryDelay` ("2s") / OpenAI's `Retry-After` seconds.
        case rateLimited(retryAfterSeconds: Double)
        /// 500 INTERNAL, 503 UNAVAILABLE ("The model is overloaded"), 504 DEADLINE_EXCEEDED.
        case serverError(Int)
        /// 400 INVALID_ARGUMENT / invalid_request_error.
        case badRequest
        /// Gemini's 400 API_KEY_INVALID, OpenAI's 401.
        case badKey
        /// Gemini `finishReason: SAFETY` with no text, OpenAI `content_filter`.
        case safety
        /// Gemini `promptFeedback.blockReason: SAFETY` with no candidates.
        case promptBlocked
        /// Gemini `MAX_TOKENS` with no text, OpenAI `length` with none.
        case maxTokensEmpty
        /// Gemini `RECITATION`.
        case recitation
        /// An image model's answer: a line of text and the picture as `inlineData` (OpenAI: the text only).
        case picture([UInt8], mimeType: String = "image/png")
        /// An image model's refusal: `finishReason: IMAGE_SAFETY` with a `finishMessage` and no picture.
        case imageSafety
    }

    /// One request as it arrived.
    public struct Received: Sendable {
        public var api: String  // "gemini" or "openai"
        public var model: String
        public var headers: [String: String]
        public var body: Data
        public var system: String
        public var prompt: String
        public var receivedAt = Date()
        public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
        /// The pictures sent with the prompt (Gemini `inlineData` parts), decoded.
        public var inputImages: [(mimeType: String, bytes: Data)] {
            let contents = json?["contents"] as? [[String: Any]] ?? []
            return contents.flatMap { ($0["parts"] as? [[String: Any]] ?? []).compactMap { part in
                guard let blob = part["inlineData"] as? [String: Any], let mime = blob["mimeType"] as? String,
                      let data = (blob["data"] as? String).flatMap({ Data(base64Encoded: $0) }) else { return nil }
                return (mime, data)
            } }
        }
    }

    public static let defaultText = "A calm wind carries your patience further than haste ever could. Trust the slow bloom of today."
    public let apiKey = "test-gemini-key"
    public let openAIKey = "test-openai-key"

    private struct State {
        var scripts: [String: [Behaviour]] = [:]
        var received: [Received] = []
        var forbidden: Set<String> = []
        var violations: [String] = []
    }
    private let state = Mutex(State())
    /// Requests told to hang: they wait until the fakes stop.
    private let hanging = StuckCalls()

    /// How unscripted models answer.
    let defaultBehaviour: Behaviour
    /// Requests per second a model takes before answering 429 with `RetryInfo` (as Gemini's per-minute quotas do,
    /// per second here), nil for no limit.
    let ratePerSecond: Int?
    /// Whether each request is kept (`received`); a benchmark of 100,000 calls keeps counts only.
    let keepsRequests: Bool
    private let window = Mutex<(second: Int, count: Int)>((0, 0))
    private let counts = Mutex<(calls: Int, limited: Int)>((0, 0))

    public init(defaultBehaviour: Behaviour = .ok(), ratePerSecond: Int? = nil, keepsRequests: Bool = true) {
        self.defaultBehaviour = defaultBehaviour
        self.ratePerSecond = ratePerSecond
        self.keepsRequests = keepsRequests
    }

    /// Requests answered, and of those refused by the rate limit.
    public var calls: (total: Int, limited: Int) { counts.withLock { ($0.calls, $0.limited) } }

    /// True when this request is over the rate limit of the current second.
    private func overLimit() -> Bool {
        guard let ratePerSecond else { return false }
        let second = Int(Date().timeIntervalSince1970)
        return window.withLock { window in
            if window.second != second { window = (second, 0) }
            window.count += 1
            return window.count > ratePerSecond
        }
    }

    /// Makes `model` answer with `behaviours`, one per request, the last one repeated.
    public func script(_ model: String, _ behaviours: Behaviour...) {
        state.withLock { $0.scripts[model] = behaviours }
    }

    /// Values that must never reach a model (a display name, a birth place, a user id).
    public func forbid(_ values: String...) {
        state.withLock { $0.forbidden.formUnion(values.filter { !$0.isEmpty }) }
    }

    /// Back to no scripts, nothing forbidden, nothing received: a journey on a stack shared with others starts
    /// from here.
    public func reset() {
        state.withLock { $0 = State() }
    }

    public var received: [Received] { state.withLock { $0.received } }
    public func received(model: String) -> [Received] { received.filter { $0.model == model } }
    public var privacyViolations: [String] { state.withLock { $0.violations } }

    /// Runs the fakes while `body` runs with their base URLs (Gemini's, and OpenAI's with `/v1`); then fails
    /// with `PromptLeak` when a prompt carried personal data.
    public func run<T: Sendable>(_ body: @Sendable (_ geminiURL: String, _ openAIURL: String) async throws -> T) async throws -> T {
        let result = try await LoopbackServer.run(router: router()) { port in
            defer { hanging.release() }
            return try await body("http://127.0.0.1:\(port)", "http://127.0.0.1:\(port)/v1")
        }
        let violations = privacyViolations
        guard violations.isEmpty else { throw PromptLeak(findings: violations) }
        return result
    }

    public struct PromptLeak: Error, CustomStringConvertible {
        public var findings: [String]
        public var description: String { "personal data reached a model: \(findings.joined(separator: "; "))" }
    }

    // MARK: Serving

    private func next(for model: String) -> Behaviour {
        state.withLock { state in
            guard var script = state.scripts[model], let first = script.first else { return defaultBehaviour }
            if script.count > 1 { script.removeFirst() }
            state.scripts[model] = script
            return first
        }
    }

    private func record(_ received: Received) {
        guard keepsRequests else { return }
        let guardFinding = PrivacyGuard().finding(in: received.system + "\n" + received.prompt)
        state.withLock { state in
            state.received.append(received)
            if let guardFinding { state.violations.append("\(received.model): a \(guardFinding)") }
            for value in state.forbidden where received.prompt.localizedCaseInsensitiveContains(value) || received.system.localizedCaseInsensitiveContains(value) {
                state.violations.append("\(received.model): '\(value)'")
            }
        }
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.post("/v1beta/models/:call") { request, context -> Response in
            let call = context.parameters.get("call") ?? ""
            guard call.hasSuffix(":generateContent") else { return Self.json(404, Self.googleError(404, "NOT_FOUND", "Method not found.")) }
            let model = String(call.dropLast(":generateContent".count))
            guard request.headers[HTTPField.Name("x-goog-api-key")!] == self.apiKey else {
                return Self.json(400, Self.googleError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", reason: "API_KEY_INVALID"))
            }
            // Image requests carry the previous picture: megabytes of base64.
            let body = try await request.body.collect(upTo: 32 << 20)
            guard let json = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any],
                  let contents = json["contents"] as? [[String: Any]] else {
                return Self.json(400, Self.googleError(400, "INVALID_ARGUMENT", "Invalid JSON payload received."))
            }
            let prompt = contents.flatMap { ($0["parts"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String } }.joined(separator: "\n")
            let system = ((json["systemInstruction"] as? [String: Any])?["parts"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }.joined()
            self.record(Received(api: "gemini", model: model, headers: Self.headers(request), body: Data(buffer: body), system: system, prompt: prompt))
            let limited = self.overLimit()
            self.counts.withLock { $0.calls += 1; if limited { $0.limited += 1 } }
            return try await self.gemini(limited ? .rateLimited(retryAfterSeconds: 1) : self.next(for: model))
        }
        router.post("/v1/chat/completions") { request, context -> Response in
            guard request.headers[.authorization] == "Bearer \(self.openAIKey)" else {
                return Self.json(401, #"{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#)
            }
            let body = try await request.body.collect(upTo: 1 << 20)
            guard let json = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any],
                  let model = json["model"] as? String, let messages = json["messages"] as? [[String: Any]] else {
                return Self.json(400, #"{"error":{"message":"Invalid request body","type":"invalid_request_error","param":null,"code":null}}"#)
            }
            let text = { (role: String) in messages.filter { $0["role"] as? String == role }.compactMap { $0["content"] as? String }.joined(separator: "\n") }
            self.record(Received(api: "openai", model: model, headers: Self.headers(request), body: Data(buffer: body), system: text("system"), prompt: text("user")))
            let wantsChoice = ((json["response_format"] as? [String: Any])?["json_schema"] as? [String: Any])?["name"] as? String == "choice"
            return try await self.openAI(self.next(for: model), model: model, wantsChoice: wantsChoice)
        }
        return router
    }

    private func gemini(_ behaviour: Behaviour) async throws -> Response {
        func answer(_ text: String, finish: String = "STOP") -> String {
            let escaped = Self.escaped(text)
            return #"{"candidates":[{"content":{"parts":[{"text":"\#(escaped)"}],"role":"model"},"finishReason":"\#(finish)","index":0}],"usageMetadata":{"promptTokenCount":42,"candidatesTokenCount":27,"totalTokenCount":69},"modelVersion":"fake","responseId":"r1"}"#
        }
        switch behaviour {
        case .ok(let text): return Self.json(200, answer(text ?? Self.defaultText))
        case .slow(let delay, let text):
            try await Task.sleep(for: delay)
            return Self.json(200, answer(text ?? Self.defaultText))
        case .rateLimited(let seconds):
            return Self.json(429, #"{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"\#(Self.seconds(seconds))s"}]}}"#)
        case .serverError(let code):
            let status = code == 503 ? "UNAVAILABLE" : code == 504 ? "DEADLINE_EXCEEDED" : "INTERNAL"
            let message = code == 503 ? "The model is overloaded. Please try again later." : "An internal error has occurred."
            return Self.json(code, Self.googleError(code, status, message))
        case .badRequest: return Self.json(400, Self.googleError(400, "INVALID_ARGUMENT", "Invalid value at 'generation_config.temperature'."))
        case .badKey: return Self.json(400, Self.googleError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", reason: "API_KEY_INVALID"))
        case .safety:
            return Self.json(200, #"{"candidates":[{"finishReason":"SAFETY","index":0,"safetyRatings":[{"category":"HARM_CATEGORY_HARASSMENT","probability":"HIGH","blocked":true}]}],"usageMetadata":{"promptTokenCount":42,"totalTokenCount":42}}"#)
        case .promptBlocked:
            return Self.json(200, #"{"promptFeedback":{"blockReason":"SAFETY","safetyRatings":[{"category":"HARM_CATEGORY_DANGEROUS_CONTENT","probability":"HIGH"}]},"usageMetadata":{"promptTokenCount":42,"totalTokenCount":42}}"#)
        case .maxTokensEmpty:
            return Self.json(200, #"{"candidates":[{"content":{"role":"model"},"finishReason":"MAX_TOKENS","index":0}],"usageMetadata":{"promptTokenCount":42,"totalTokenCount":298,"thoughtsTokenCount":256}}"#)
        case .recitation: return Self.json(200, answer("", finish: "RECITATION"))
        case .picture(let bytes, let mimeType):
            return Self.json(200, #"{"candidates":[{"content":{"parts":[{"text":"Here is your evolved ghost!"},{"inlineData":{"mimeType":"\#(mimeType)","data":"\#(Data(bytes).base64EncodedString())"}}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1290,"candidatesTokenCount":1290,"totalTokenCount":2580},"modelVersion":"fake","responseId":"r1"}"#)
        case .imageSafety:
            return Self.json(200, #"{"candidates":[{"content":{"role":"model"},"finishReason":"IMAGE_SAFETY","finishMessage":"Unable to show the generated image. The image was filtered out because it violated Google's Generative AI Prohibited Use policy.","index":0}],"usageMetadata":{"promptTokenCount":1290,"totalTokenCount":1290}}"#)
        case .hang:
            await hanging.wait()
            return Self.json(503, Self.googleError(503, "UNAVAILABLE", "The model is overloaded. Please try again later."))
        }
    }

    private func openAI(_ behaviour: Behaviour, model: String, wantsChoice: Bool) async throws -> Response {
        func answer(_ text: String, finish: String = "stop") -> String {
            #"{"id":"chatcmpl-1","object":"chat.completion","created":1767225600,"model":"\#(model)","choices":[{"index":0,"message":{"role":"assistant","content":"\#(Self.escaped(text))"},"finish_reason":"\#(finish)"}],"usage":{"prompt_tokens":40,"completion_tokens":25,"total_tokens":65}}"#
        }
        func text(_ given: String?) -> String {
            let text = given ?? Self.defaultText
            return wantsChoice ? #"{"answer":"\#(Self.escaped(text))"}"# : text
        }
        switch behaviour {
        case .ok(let given): return Self.json(200, answer(text(given)))
        case .slow(let delay, let given):
            try await Task.sleep(for: delay)
            return Self.json(200, answer(text(given)))
        case .rateLimited(let seconds):
            return Self.json(429, #"{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#,
                             headers: ["retry-after": Self.seconds(seconds)])
        case .serverError(let code): return Self.json(code, #"{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}"#)
        case .badRequest: return Self.json(400, #"{"error":{"message":"Invalid 'temperature'","type":"invalid_request_error","param":"temperature","code":null}}"#)
        case .badKey: return Self.json(401, #"{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#)
        case .safety, .promptBlocked: return Self.json(200, answer("", finish: "content_filter"))
        case .maxTokensEmpty: return Self.json(200, answer("", finish: "length"))
        case .recitation: return Self.json(200, answer("", finish: "content_filter"))
        case .picture: return Self.json(200, answer(text(nil)))
        case .imageSafety: return Self.json(200, answer("", finish: "content_filter"))
        case .hang:
            await hanging.wait()
            return Self.json(503, #"{"error":{"message":"overloaded","type":"server_error","param":null,"code":null}}"#)
        }
    }

    // MARK: Helpers

    static func googleError(_ code: Int, _ status: String, _ message: String, reason: String? = nil) -> String {
        let details = reason.map { #","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"\#($0)","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]"# } ?? ""
        return #"{"error":{"code":\#(code),"message":"\#(message)","status":"\#(status)"\#(details)}}"#
    }

    static func seconds(_ value: Double) -> String {
        value.rounded() == value ? String(Int(value)) : String(value)
    }

    static func escaped(_ text: String) -> String {
        let data = (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8)
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }

    static func headers(_ request: Request) -> [String: String] {
        Dictionary(request.headers.map { ($0.name.canonicalName, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    static func json(_ status: Int, _ body: String, headers: [String: String] = [:]) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = "application/json; charset=UTF-8"
        for (name, value) in headers { if let name = HTTPField.Name(name) { fields[name] = value } }
        return Response(status: .init(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
