import Foundation
import Hummingbird
import NIOCore
import NIOFoundationCompat
import LanternCore

/// Which `Content-Type` is JSON: `application/json` or a `+json` type (`application/problem+json`), parameters
/// allowed. Not "anything that mentions json": `text/plain;json` is a type a browser sends across origins without a
/// preflight, so taking it would let a page of another site post JSON to a local stack (DNS rebinding).
public enum JSONMediaType {
    public static func accepts(_ contentType: String) -> Bool {
        let type = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json"))
    }
}

extension Request {
    /// Decodes a JSON body, turning every failure into a problem that names the field.
    ///
    /// - 415 when the content type is not JSON, 413 when the body exceeds `context.maxUploadSize`,
    ///   400 for malformed JSON, 422 for missing fields, wrong types, nulls and numbers that are not whole where a
    ///   whole number is due (`Problem.decodeBody`).
    public func decodeJSON<T: Decodable>(as type: T.Type, context: some RequestContext) async throws -> T {
        if let contentType = headers[.contentType], !JSONMediaType.accepts(contentType) {
            throw Problem.unsupportedMediaType("Send the body as application/json.")
        }
        var request = self
        let buffer = try await request.collectBody(limit: context.maxUploadSize)
        guard buffer.readableBytes > 0 else { throw Problem.badRequest("The request body is empty; send a JSON object.", code: "malformed_json") }
        return try Problem.decodeBody(T.self, from: Data(buffer: buffer), decoder: .lantern)
    }
}

extension Request {
    /// Like `decodeJSON`, for an optional body: nil when the request has none.
    public func decodeJSONIfPresent<T: Decodable>(as type: T.Type, context: some RequestContext) async throws -> T? {
        var request = self
        let buffer = try await request.collectBody(limit: context.maxUploadSize)
        guard buffer.readableBytes > 0 else { return nil }
        if let contentType = headers[.contentType], !JSONMediaType.accepts(contentType) {
            throw Problem.unsupportedMediaType("Send the body as application/json.")
        }
        return try Problem.decodeBody(T.self, from: Data(buffer: buffer), decoder: .lantern)
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
        // A type that writes its own JSON (the same bytes) skips Codable's runtime.
        if let writable = value as? any JSONWritable {
            return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: writable.jsonBytes)))
        }
        let data = try JSONEncoder.lantern.encode(value)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
