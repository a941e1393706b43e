import Foundation
import Hummingbird
import NIOCore
import NIOFoundationCompat
import LanternCore

extension Request {
    /// Decodes a JSON body, turning every failure into a problem that names the field.
    ///
    /// - 415 when the content type is not JSON, 413 when the body exceeds `context.maxUploadSize`,
    ///   400 for malformed JSON, 422 for missing fields, wrong types and nulls.
    public func decodeJSON<T: Decodable>(as type: T.Type, context: some RequestContext) async throws -> T {
        if let contentType = headers[.contentType], !contentType.lowercased().contains("json") {
            throw Problem.unsupportedMediaType("Send the body as application/json.")
        }
        var request = self
        let buffer = try await request.collectBody(limit: context.maxUploadSize)
        guard buffer.readableBytes > 0 else { throw Problem.badRequest("The request body is empty; send a JSON object.", code: "malformed_json") }
        do {
            return try JSONDecoder.lantern.decode(T.self, from: Data(buffer: buffer))
        } catch let error as DecodingError {
            throw Problem(decoding: error)
        }
    }
}

extension Request {
    /// Like `decodeJSON`, for an optional body: nil when the request has none.
    public func decodeJSONIfPresent<T: Decodable>(as type: T.Type, context: some RequestContext) async throws -> T? {
        var request = self
        let buffer = try await request.collectBody(limit: context.maxUploadSize)
        guard buffer.readableBytes > 0 else { return nil }
        if let contentType = headers[.contentType], !contentType.lowercased().contains("json") {
            throw Problem.unsupportedMediaType("Send the body as application/json.")
        }
        do {
            return try JSONDecoder.lantern.decode(T.self, from: Data(buffer: buffer))
        } catch let error as DecodingError {
            throw Problem(decoding: error)
        }
    }
}

extension Problem {
    /// Maps a `DecodingError` to 400 (not JSON) or 422 (JSON of the wrong shape), naming the field.
    public init(decoding error: DecodingError) {
        func path(_ context: DecodingError.Context, _ key: (any CodingKey)? = nil) -> String {
            var keys = context.codingPath
            if let key { keys.append(key) }
            let parts = keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return parts.reduce("") { acc, part in part.hasPrefix("[") ? acc + part : (acc.isEmpty ? part : acc + "." + part) }
        }
        switch error {
        case .keyNotFound(let key, let context):
            self = .invalid(field: path(context, key), "is required")
        case .typeMismatch(let type, let context):
            let field = path(context)
            self = field.isEmpty ? .badRequest("The body must be a JSON object.", code: "malformed_json")
                                 : .invalid(field: field, "must be \(Self.describe(type))")
        case .valueNotFound(let type, let context):
            let field = path(context)
            // `null` as the whole body names no field: it is not the JSON object every endpoint takes.
            self = field.isEmpty ? .badRequest("The body must be a JSON object, not null.", code: "malformed_json")
                                 : .invalid(field: field, "must be \(Self.describe(type)), not null")
        case .dataCorrupted(let context):
            let field = path(context)
            if field.isEmpty {
                self = .badRequest("The body is not valid JSON.", code: "malformed_json")
            } else {
                self = .invalid(field: field, context.debugDescription)
            }
        @unknown default:
            self = .badRequest("The body could not be read.", code: "malformed_json")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Int64.Type, is Int32.Type: return "an integer"
        case is Double.Type, is Float.Type: return "a number"
        case is Bool.Type: return "true or false"
        case is [Any].Type: return "an array"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Array") { return "an array" }
            if name.hasPrefix("Dictionary") { return "an object" }
            return "a valid \(name)"
        }
    }
}

/// A JSON response with Lantern's encoder (RFC 3339 dates, sorted keys).
public struct JSONResponse<Value: Encodable & Sendable>: ResponseGenerator, Sendable {
    public var status: HTTPResponse.Status
    public var value: Value
    public var headers: HTTPFields

    public init(_ value: Value, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) {
        self.value = value
        self.status = status
        self.headers = headers
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        let data = try JSONEncoder.lantern.encode(value)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
