import AsyncHTTPClient
import Foundation
import LanternCore
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Any server speaking OpenAI's chat completions: `POST {base}/chat/completions` (llama.cpp's server, vLLM,
/// Ollama, hosted ones). The base URL includes the version (`http://127.0.0.1:8080/v1`); the key, when set, goes
/// in `Authorization: Bearer`.
///
/// Accepted: `choices[0]` with `finish_reason: "stop"` and text content. `length` is a truncated answer,
/// `content_filter` or a `refusal` a blocked one. Errors are `{"error": {"message", "type", "code"}}`; a 429's
/// `retry-after-ms` or `Retry-After` is the wait before the same model is tried again.
public struct OpenAICompatibleProvider: LLMProvider {
    public let name: String
    let baseURL: String
    let apiKey: String?
    let http: HTTPClient

    public init(name: String = "openai", baseURL: String, apiKey: String?, http: HTTPClient = .shared) {
        self.name = name
        self.baseURL = baseURL.trimmingSuffix("/")
        self.apiKey = apiKey
        self.http = http
    }

    public func generate(_ request: LLMRequest, model: String, timeout: Duration) async throws -> ProviderAnswer {
        var http = HTTPClientRequest(url: "\(baseURL)/chat/completions")
        http.method = .POST
        http.headers.add(name: "content-type", value: "application/json")
        if let apiKey { http.headers.add(name: "authorization", value: "Bearer \(apiKey)") }
        http.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(Self.body(for: request, model: model))))
        let (status, headers, body) = try await HTTPExchange.send(http, client: self.http, timeout: timeout)
        guard status == 200 else { throw Self.failure(status: status, headers: headers, body: body) }
        var answer = try Self.answer(from: body)
        if case .choice = request.format {
            struct Choice: Decodable { var answer: String }
            guard let choice = try? JSONDecoder().decode(Choice.self, from: Data(answer.text.utf8)) else {
                throw ProviderFailure(.malformed, "not the {\"answer\": …} object asked for")
            }
            answer.text = choice.answer
        }
        return answer
    }

    // MARK: Wire format

    struct Body: Encodable {
        struct Message: Encodable {
            var role: String
            var content: String
        }
        struct ResponseFormat: Encodable {
            struct Schema: Encodable {
                var name: String
                var schema: JSONValue
                var strict: Bool
            }
            var type: String
            var json_schema: Schema?
        }
        var model: String
        var messages: [Message]
        var max_tokens: Int
        var temperature: Double
        var n = 1
        var response_format: ResponseFormat?
    }

    static func body(for request: LLMRequest, model: String) -> Body {
        var system = request.system
        var format: Body.ResponseFormat?
        switch request.format {
        case .text: break
        case .json(let schema):
            format = .init(type: "json_schema", json_schema: .init(name: request.task.replacingOccurrences(of: ".", with: "_"), schema: schema, strict: true))
        case .choice(let options):
            // Chat completions have no enum output; a one-property schema is the portable way to ask for one value.
            let schema = JSONValue.object([
                "type": .string("object"),
                "properties": .object(["answer": .object(["type": .string("string"), "enum": .array(options.map(JSONValue.string))])]),
                "required": .array([.string("answer")]),
                "additionalProperties": .bool(false),
            ])
            format = .init(type: "json_schema", json_schema: .init(name: "choice", schema: schema, strict: true))
            system += "\nAnswer with a JSON object {\"answer\": …} whose value is one of: \(options.joined(separator: ", "))."
        }
        return Body(model: model, messages: [.init(role: "system", content: system), .init(role: "user", content: request.prompt)],
                    max_tokens: request.maxOutputTokens, temperature: request.temperature, response_format: format)
    }

    struct Response: Decodable {
        struct Choice: Decodable {
            struct Message: Decodable {
                var content: String?
                var refusal: String?
            }
            var message: Message?
            var finish_reason: String?
        }
        struct Usage: Decodable {
            var prompt_tokens: Int?
            var completion_tokens: Int?
        }
        var choices: [Choice]?
        var usage: Usage?
    }

    static func answer(from body: ByteBuffer) throws -> ProviderAnswer {
        guard let response = try? JSONDecoder().decode(Response.self, from: body) else {
            throw ProviderFailure(.malformed, "not a chat completion")
        }
        guard let choice = response.choices?.first else { throw ProviderFailure(.malformed, "no choices") }
        if let refusal = choice.message?.refusal, !refusal.isEmpty { throw ProviderFailure(.blocked, "refusal") }
        let text = choice.message?.content ?? ""
        let usage = TokenUsage(prompt: response.usage?.prompt_tokens ?? 0, output: response.usage?.completion_tokens ?? 0)
        switch choice.finish_reason {
        case "stop":
            guard !text.trimmingWhitespace().isEmpty else { throw ProviderFailure(.unusable, "stop with no text") }
            return ProviderAnswer(text: text, usage: usage)
        case "length": throw ProviderFailure(.truncated, text.isEmpty ? "length with no text" : "length: the answer was cut off")
        case "content_filter": throw ProviderFailure(.blocked, "content_filter")
        case let other: throw ProviderFailure(.unusable, "finish_reason \(other ?? "missing")")
        }
    }

    struct ErrorBody: Decodable {
        struct Inner: Decodable {
            var message: String?
            var type: String?
        }
        var error: Inner
    }

    static func failure(status: Int, headers: HTTPHeaders, body: ByteBuffer) -> ProviderFailure {
        let error = try? JSONDecoder().decode(ErrorBody.self, from: body)
        let detail = "\(status) \(error?.error.type ?? ""): \(error?.error.message.map { String($0.prefix(200)) } ?? "")"
        return .status(status, detail: detail,
                       retryAfter: RetryAfter.parse(headers.first(name: "retry-after"), milliseconds: headers.first(name: "retry-after-ms")))
    }
}
