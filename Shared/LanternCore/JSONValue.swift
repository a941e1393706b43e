import Foundation

/// Any JSON value; event payloads travel as this so the bus need not know every payload type.
public enum JSONValue: Codable, Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        // A decoder cannot be asked what it holds, only tried, and every wrong guess throws an error (with its coding
        // path and message). Most values of an event are strings, then numbers: they are tried first.
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let o = try? c.decode([String: JSONValue].self) { self = .object(o) }
        else { self = .array(try c.decode([JSONValue].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let n): try c.encode(n)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    /// Converts any `Encodable` into a `JSONValue`.
    public init(encoding value: some Encodable) throws {
        let data = try JSONEncoder.lantern.encode(value)
        self = try JSONDecoder.lantern.decode(JSONValue.self, from: data)
    }

    /// Decodes this value as `T`.
    public func decode<T: Decodable>(as type: T.Type = T.self) throws -> T {
        try JSONDecoder.lantern.decode(T.self, from: JSONEncoder.lantern.encode(self))
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }
}

extension JSONEncoder {
    /// RFC 3339 timestamps with milliseconds, sorted keys (stable output for ETags and tests).
    public static var lantern: JSONEncoder {
        let e = JSONEncoder()
        e.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(RFC3339.string(from: date))
        }
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }
}

extension JSONDecoder {
    public static var lantern: JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .custom { decoder in
            let c = try decoder.singleValueContainer()
            let s = try c.decode(String.self)
            guard let date = RFC3339.date(from: s) else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "expected an RFC 3339 timestamp")
            }
            return date
        }
        return d
    }
}

/// RFC 3339 in UTC with millisecond precision (`2026-01-01T12:00:00.000Z`).
public enum RFC3339 {
    public static func string(from date: Date) -> String {
        // The formatter truncates; add half a millisecond so it rounds (0.123 is 0.12299… as a Double).
        date.addingTimeInterval(0.0005).formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: true).timeSeparator(.colon).timeZone(separator: .omitted))
    }

    public static func date(from string: String) -> Date? {
        if let d = try? Date(string, strategy: .iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: true).timeSeparator(.colon).timeZone(separator: .omitted)) { return d }
        return try? Date(string, strategy: .iso8601)
    }
}
