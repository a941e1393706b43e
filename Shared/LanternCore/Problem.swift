import Foundation

/// An RFC 9457 problem: the one error shape every Lantern endpoint answers with.
///
/// `code` is the stable, machine-readable name apps switch on; `title`/`detail` are for people.
/// Validation problems list each offending field in `errors`.
public struct Problem: Error, Codable, Sendable, Equatable {
    public struct FieldError: Codable, Sendable, Equatable {
        public var field: String
        public var message: String
        public init(field: String, message: String) {
            self.field = field
            self.message = message
        }
    }

    public var type: String
    public var title: String
    public var status: Int
    public var detail: String?
    public var code: String
    public var errors: [FieldError]?
    /// Seconds a client should wait before retrying (rate limits); sent as `Retry-After`, not in the body.
    public var retryAfter: Int?
    /// RFC 9457 extension members, written beside the standard ones (`opensAgainAt` of a locked cookie).
    public var extensions: [String: JSONValue]?

    public init(status: Int, code: String, title: String, detail: String? = nil, errors: [FieldError]? = nil, retryAfter: Int? = nil,
                extensions: [String: JSONValue]? = nil) {
        self.type = "https://lantern.dev/problems/\(code.replacingOccurrences(of: "_", with: "-"))"
        self.title = title
        self.status = status
        self.detail = detail
        self.code = code
        self.errors = errors
        self.retryAfter = retryAfter
        self.extensions = extensions
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case type, title, status, detail, code, errors
    }

    private struct MemberKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(String.self, forKey: .type)
        title = try container.decode(String.self, forKey: .title)
        status = try container.decode(Int.self, forKey: .status)
        detail = try container.decodeIfPresent(String.self, forKey: .detail)
        code = try container.decode(String.self, forKey: .code)
        errors = try container.decodeIfPresent([FieldError].self, forKey: .errors)
        let members = try decoder.container(keyedBy: MemberKey.self)
        let standard = Set(CodingKeys.allCases.map(\.rawValue))
        var extensions: [String: JSONValue] = [:]
        for key in members.allKeys where !standard.contains(key.stringValue) {
            extensions[key.stringValue] = try members.decode(JSONValue.self, forKey: key)
        }
        self.extensions = extensions.isEmpty ? nil : extensions
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(title, forKey: .title)
        try container.encode(status, forKey: .status)
        try container.encodeIfPresent(detail, forKey: .detail)
        try container.encode(code, forKey: .code)
        try container.encodeIfPresent(errors, forKey: .errors)
        var members = encoder.container(keyedBy: MemberKey.self)
        let standard = Set(CodingKeys.allCases.map(\.rawValue))
        for (key, value) in extensions ?? [:] where !standard.contains(key) {
            try members.encode(value, forKey: MemberKey(stringValue: key))
        }
    }
}

extension Problem {
    public static func badRequest(_ detail: String, code: String = "malformed_request", field: String? = nil) -> Problem {
        Problem(status: 400, code: code, title: "Malformed request", detail: detail, errors: field.map { [FieldError(field: $0, message: detail)] })
    }

    /// 422: the request parsed but a field's value is not acceptable. `errors` lists every field; the detail, which
    /// a person reads, names the first `detailFields` of them and counts the rest (a body with forty bad items
    /// would otherwise make a detail of pages).
    public static func invalid(_ errors: [FieldError], code: String = "validation_failed") -> Problem {
        var detail = errors.prefix(detailFields).map { "\($0.field): \($0.message)" }.joined(separator: "; ")
        if errors.count > detailFields {
            detail += "; and \(errors.count - detailFields) more (every one is in errors)"
        }
        return Problem(status: 422, code: code, title: "Invalid request", detail: detail, errors: errors)
    }

    /// How many field errors a 422's detail names.
    public static let detailFields = 3

    public static func invalid(field: String, _ message: String, code: String = "validation_failed") -> Problem {
        invalid([FieldError(field: field, message: message)], code: code)
    }

    public static func unauthorized(_ detail: String, code: String = "unauthorized") -> Problem {
        Problem(status: 401, code: code, title: "Unauthorized", detail: detail)
    }

    public static func forbidden(_ detail: String, code: String = "forbidden") -> Problem {
        Problem(status: 403, code: code, title: "Forbidden", detail: detail)
    }

    public static func notFound(_ detail: String, code: String = "not_found") -> Problem {
        Problem(status: 404, code: code, title: "Not found", detail: detail)
    }

    public static func conflict(_ detail: String, code: String) -> Problem {
        Problem(status: 409, code: code, title: "Conflict", detail: detail)
    }

    public static func tooLarge(_ detail: String) -> Problem {
        Problem(status: 413, code: "payload_too_large", title: "Payload too large", detail: detail)
    }

    public static func unsupportedMediaType(_ detail: String) -> Problem {
        Problem(status: 415, code: "unsupported_media_type", title: "Unsupported media type", detail: detail)
    }

    public static func tooManyRequests(retryAfter: Int) -> Problem {
        Problem(status: 429, code: "rate_limited", title: "Too many requests",
                detail: "Slow down; retry after \(retryAfter) s.", retryAfter: retryAfter)
    }

    public static func internalError(requestID: String?) -> Problem {
        Problem(status: 500, code: "internal_error", title: "Internal server error",
                detail: "Something went wrong on our side" + (requestID.map { " (request \($0))" } ?? "") + ".")
    }
}

/// Collects field errors so a client learns every mistake in one round trip.
public struct FieldValidator: Sendable {
    public private(set) var errors: [Problem.FieldError] = []
    public init() {}

    public mutating func check(_ condition: Bool, _ field: String, _ message: @autoclosure () -> String) {
        if !condition { errors.append(.init(field: field, message: message())) }
    }

    public mutating func fail(_ field: String, _ message: String) {
        errors.append(.init(field: field, message: message))
    }

    /// Throws a 422 problem listing every collected error, if any.
    public func validate() throws {
        if !errors.isEmpty { throw Problem.invalid(errors) }
    }
}

/// An error that knows the problem a client should see (a refused token, a key set that could not be fetched), so
/// the HTTP layer can answer it without knowing the module it comes from.
public protocol ProblemConvertible: Error {
    var problem: Problem { get }
}
