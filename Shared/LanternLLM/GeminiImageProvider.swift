import AsyncHTTPClient
import Foundation
import LanternCore
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// What an image model is asked for: a prompt and, for continuity, pictures it starts from.
public struct ImageRequest: Sendable {
    public struct InputImage: Sendable {
        public var bytes: [UInt8]
        public var mimeType: String

        public init(bytes: [UInt8], mimeType: String) {
            self.bytes = bytes
            self.mimeType = mimeType
        }
    }

    public var prompt: String
    public var inputImages: [InputImage]

    public init(prompt: String, inputImages: [InputImage] = []) {
        self.prompt = prompt
        self.inputImages = inputImages
    }
}

/// The picture an image model drew, as it sent it: the bytes still have to be checked and cleaned (`ImageSanitizer`)
/// before anyone sees them.
public struct DrawnImage: Sendable {
    public var bytes: [UInt8]
    public var mimeType: String
    /// What the model said beside the picture, if anything (logged, never shown).
    public var text: String

    public init(bytes: [UInt8], mimeType: String, text: String = "") {
        self.bytes = bytes
        self.mimeType = mimeType
        self.text = text
    }
}

/// A model that draws (Symbi's evolutions). Failures are `ProviderFailure`s, as for text.
public protocol ImageModel: Sendable {
    var name: String { get }
    func draw(_ request: ImageRequest, model: String, timeout: Duration) async throws -> DrawnImage
}

/// Gemini's native image generation: the same `POST {base}/v1beta/models/{model}:generateContent` as text, with
/// `generationConfig.responseModalities: ["TEXT", "IMAGE"]`, input pictures as `inlineData` parts, and the picture
/// back as a part's `inlineData` (`mimeType`, base64 `data`).
///
/// Only an answer with a picture is accepted. A text-only answer (the model described instead of drawing),
/// `IMAGE_SAFETY`, `IMAGE_PROHIBITED_CONTENT`, `NO_IMAGE`, a blocked prompt: failures, with the model's own words
/// in the detail. HTTP errors are read as for text (`GeminiProvider.failure`: a 429's `RetryInfo.retryDelay`).
public struct GeminiImageProvider: ImageModel {
    /// Larger answers are not one picture (a 1024×1024 PNG is 1–2 MB, ×4/3 in base64).
    public static let maxAnswerBytes = 24 << 20

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

    public func draw(_ request: ImageRequest, model: String, timeout: Duration) async throws -> DrawnImage {
        let http = try GeminiProvider.generateContent(baseURL: baseURL, apiKey: apiKey, model: model, body: Self.body(for: request))
        let (status, headers, body) = try await HTTPExchange.send(http, client: self.http, timeout: timeout, bodyLimit: Self.maxAnswerBytes)
        guard status == 200 else { throw GeminiProvider.failure(status: status, headers: headers, body: body) }
        return try Self.image(from: body)
    }

    // MARK: Wire format

    struct Body: Encodable {
        struct Content: Encodable {
            var role: String
            var parts: [Part]
        }
        struct Part: Encodable {
            var text: String?
            var inlineData: Blob?
        }
        struct Blob: Codable {
            var mimeType: String
            var data: String
        }
        struct GenerationConfig: Encodable {
            var responseModalities = ["TEXT", "IMAGE"]
            var candidateCount = 1
        }
        var contents: [Content]
        var generationConfig = GenerationConfig()
    }

    static func body(for request: ImageRequest) -> Body {
        let images = request.inputImages.map { Body.Part(inlineData: .init(mimeType: $0.mimeType, data: Data($0.bytes).base64EncodedString())) }
        return Body(contents: [.init(role: "user", parts: [.init(text: request.prompt)] + images)])
    }

    struct Response: Decodable {
        struct Candidate: Decodable {
            struct Content: Decodable {
                struct Part: Decodable {
                    var text: String?
                    var thought: Bool?
                    var inlineData: Body.Blob?
                    /// The REST API answers in camelCase; proto-JSON clients also accept snake_case, so both are read.
                    var inline_data: Body.Blob?
                }
                var parts: [Part]?
            }
            var content: Content?
            var finishReason: String?
            var finishMessage: String?
        }
        struct PromptFeedback: Decodable { var blockReason: String? }
        var candidates: [Candidate]?
        var promptFeedback: PromptFeedback?
    }

    static func image(from body: ByteBuffer) throws -> DrawnImage {
        guard let response = try? JSONDecoder().decode(Response.self, from: body) else {
            throw ProviderFailure(.malformed, "not a generateContent response")
        }
        if let reason = response.promptFeedback?.blockReason {
            throw ProviderFailure(.blocked, "prompt blocked: \(reason)")
        }
        guard let candidate = response.candidates?.first else { throw ProviderFailure(.malformed, "no candidates") }
        let parts = (candidate.content?.parts ?? []).filter { $0.thought != true }
        let text = parts.compactMap(\.text).joined()
        let said = text.isEmpty ? "" : ": \(text.prefix(160))"
        switch candidate.finishReason {
        case "STOP", nil:
            // The last picture is the answer (a model may send a draft before it).
            guard let blob = parts.compactMap({ $0.inlineData ?? $0.inline_data }).last else {
                throw ProviderFailure(.unusable, "answered with text only\(said)")
            }
            guard let bytes = Data(base64Encoded: blob.data), !bytes.isEmpty else {
                throw ProviderFailure(.malformed, "inlineData is not base64")
            }
            return DrawnImage(bytes: Array(bytes), mimeType: blob.mimeType, text: text)
        case "SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT":
            throw ProviderFailure(.blocked, "finishReason \(candidate.finishReason ?? "")\(candidate.finishMessage.map { ": \($0.prefix(160))" } ?? said)")
        case let other:
            throw ProviderFailure(.unusable, "finishReason \(other ?? "missing")\(candidate.finishMessage.map { ": \($0.prefix(160))" } ?? said)")
        }
    }
}
