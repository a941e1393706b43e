import AsyncHTTPClient
import Foundation
import LanternCore
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Google's Gemini API, `POST {base}/v1beta/models/{model}:generateContent` with the key in `x-goog-api-key`.
///
/// Only a clean answer is accepted: `candidates[0]` with `finishReason: STOP` and text parts. A blocked prompt
/// (`promptFeedback.blockReason`), `SAFETY`/`PROHIBITED_CONTENT`/`BLOCKLIST`/`SPII`, `MAX_TOKENS` with no text,
/// `RECITATION`, `LANGUAGE` and any other stop are failures the router falls back from. Errors are Google's
/// `{"error": {"code", "message", "status", "details"}}`; a 429's `google.rpc.RetryInfo.retryDelay` ("37s") is
/// the wait before the same model is tried again.
public struct GeminiProvider: LLMProvider {
    public let name: String
    let baseURL: String
    let apiKey: String
    let http: HTTPClient

    /// - Parameter baseURL: `https://generativelanguage.googleapis.com` in production; a loopback fake in tests.
    public init(name: String = "gemini", baseURL: String, apiKey: String, http: HTTPClient = .shared) {
        self.name = name
        self.baseURL = baseURL.trimmingSuffix("/")
        self.apiKey = apiKey
        self.http = http
    }

    public func generate(_ request: LLMRequest, model: String, timeout: Duration) async throws -> ProviderAnswer {
        let http = try Self.generateContent(baseURL: baseURL, apiKey: apiKey, model: model, body: Self.body(for: request, model: model))
        let (status, headers, body) = try await HTTPExchange.send(http, client: self.http, timeout: timeout)
        guard status == 200 else { throw Self.failure(status: status, headers: headers, body: body) }
        return try Self.answer(from: body)
    }

    /// `POST {base}/v1beta/models/{model}:generateContent` with the key in `x-goog-api-key` and `body` as JSON: the
    /// one call of Gemini's text and image generation alike.
    static func generateContent(baseURL: String, apiKey: String, model: String, body: some Encodable) throws -> HTTPClientRequest {
        guard let escaped = model.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/:"))) else {
            throw ProviderFailure(.rejected, "model id \(model)")
        }
        var http = HTTPClientRequest(url: "\(baseURL)/v1beta/models/\(escaped):generateContent")
        http.method = .POST
        http.headers.add(name: "content-type", value: "application/json")
        http.headers.add(name: "x-goog-api-key", value: apiKey)
        http.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(body)))
        return http
    }

    // MARK: Wire format

    struct Body: Encodable {
        struct Content: Encodable {
            var role: String?
            var parts: [Part]
        }
        struct Part: Encodable { var text: String }
        struct GenerationConfig: Encodable {
            var maxOutputTokens: Int
            var temperature: Double
            var candidateCount = 1
            var responseMimeType: String?
            var responseJsonSchema: JSONValue?
            var responseSchema: EnumSchema?
            var thinkingConfig: ThinkingConfig?
        }
        struct ThinkingConfig: Encodable {
            var thinkingBudget: Int?
            var thinkingLevel: String?
        }
        struct EnumSchema: Encodable {
            var type = "STRING"
            var `enum`: [String]
        }
        var contents: [Content]
        var systemInstruction: Content
        var generationConfig: GenerationConfig
    }

    /// Thinking is turned down for short texts: flash models of the 2.5 family take `thinkingBudget: 0` (off);
    /// Gemini 3 models take `thinkingLevel` (`minimal` for flash, `low` for pro, which cannot switch it off);
    /// 2.5 pro cannot switch it off either and keeps its default.
    static func thinking(for model: String) -> Body.ThinkingConfig? {
        let id = model.lowercased()
        if id.hasPrefix("gemini-2.5") { return id.contains("flash") ? .init(thinkingBudget: 0) : nil }
        if id.hasPrefix("gemini-3") { return .init(thinkingLevel: id.contains("flash") ? "minimal" : "low") }
        return nil
    }

    static func body(for request: LLMRequest, model: String) -> Body {
        var config = Body.GenerationConfig(maxOutputTokens: request.maxOutputTokens, temperature: request.temperature,
                                           thinkingConfig: thinking(for: model))
        switch request.format {
        case .text: break
        case .json(let schema):
            config.responseMimeType = "application/json"
            config.responseJsonSchema = schema
        case .choice(let options):
            config.responseMimeType = "text/x.enum"
            config.responseSchema = .init(enum: options)
        }
        return Body(contents: [.init(role: "user", parts: [.init(text: request.prompt)])],
                    systemInstruction: .init(role: nil, parts: [.init(text: request.system)]),
                    generationConfig: config)
    }

    struct Response: Decodable {
        struct Candidate: Decodable {
            struct Content: Decodable {
                struct Part: Decodable {
                    var text: String?
                    var thought: Bool?
                }
                var parts: [Part]?
            }
            var content: Content?
            var finishReason: String?
        }
        struct PromptFeedback: Decodable { var blockReason: String? }
        struct Usage: Decodable {
            var promptTokenCount: Int?
            var candidatesTokenCount: Int?
            var thoughtsTokenCount: Int?
        }
        var candidates: [Candidate]?
        var promptFeedback: PromptFeedback?
        var usageMetadata: Usage?
    }

    static func answer(from body: ByteBuffer) throws -> ProviderAnswer {
        guard let response = try? JSONDecoder().decode(Response.self, from: body) else {
            throw ProviderFailure(.malformed, "not a generateContent response")
        }
        if let reason = response.promptFeedback?.blockReason {
            throw ProviderFailure(.blocked, "prompt blocked: \(reason)")
        }
        guard let candidate = response.candidates?.first else { throw ProviderFailure(.malformed, "no candidates") }
        // Thought summaries are parts too; only the answer's text counts.
        let text = (candidate.content?.parts ?? []).filter { $0.thought != true }.compactMap(\.text).joined()
        let usage = TokenUsage(prompt: response.usageMetadata?.promptTokenCount ?? 0,
                               output: response.usageMetadata?.candidatesTokenCount ?? 0,
                               thoughts: response.usageMetadata?.thoughtsTokenCount ?? 0)
        switch candidate.finishReason {
        case "STOP":
            guard !text.trimmingWhitespace().isEmpty else { throw ProviderFailure(.unusable, "STOP with no text") }
            return ProviderAnswer(text: text, usage: usage)
        case "MAX_TOKENS":
            throw ProviderFailure(.truncated, text.isEmpty ? "MAX_TOKENS with no text" : "MAX_TOKENS: the answer was cut off")
        case "SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII":
            throw ProviderFailure(.blocked, "finishReason \(candidate.finishReason ?? "")")
        case let other:
            throw ProviderFailure(.unusable, "finishReason \(other ?? "missing")")
        }
    }

    struct ErrorBody: Decodable {
        struct Detail: Decodable {
            var type: String?
            var retryDelay: String?
            var reason: String?
            enum CodingKeys: String, CodingKey {
                case type = "@type"
                case retryDelay
                case reason
            }
        }
        struct Inner: Decodable {
            var code: Int?
            var message: String?
            var status: String?
            var details: [Detail]?
        }
        var error: Inner
    }

    static func failure(status: Int, headers: HTTPHeaders, body: ByteBuffer) -> ProviderFailure {
        let error = try? JSONDecoder().decode(ErrorBody.self, from: body)
        let delay = error?.error.details?.first { $0.type?.hasSuffix("google.rpc.RetryInfo") == true }?.retryDelay.flatMap(protobufDuration)
        let detail = "\(status) \(error?.error.status ?? ""): \(error?.error.message.map { String($0.prefix(200)) } ?? "")"
        // A wrong key is a 400 INVALID_ARGUMENT whose ErrorInfo says API_KEY_INVALID: the key's fault, not the request's.
        if error?.error.details?.contains(where: { $0.reason == "API_KEY_INVALID" }) == true { return ProviderFailure(.unauthorized, detail) }
        return .status(status, detail: detail, retryAfter: delay ?? RetryAfter.parse(headers.first(name: "retry-after")))
    }

    /// A `google.protobuf.Duration` in JSON: seconds with an `s`, fractions allowed (`"37s"`, `"0.5s"`).
    static func protobufDuration(_ text: String) -> Duration? {
        guard text.hasSuffix("s"), let seconds = Double(text.dropLast()), seconds >= 0, seconds.isFinite else { return nil }
        return .milliseconds(Int64(seconds * 1000))
    }
}
