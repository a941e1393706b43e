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
    /// `2026-01-01T12:00:00.123Z`: UTC, milliseconds rounded.
    public static func string(from date: Date) -> String {
        // Half a millisecond added, then truncated: rounded (0.123 is 0.12299… as a Double). Counted from 2001 as
        // `Date` keeps it and Foundation reads it, so that the same bits round the same way.
        let time = date.timeIntervalSinceReferenceDate + 0.0005
        let seconds = time.rounded(.down)
        // Years 1583…9999 written from the numbers (every response carries dates; the format style costs ten times
        // as much); anything else by Foundation's ISO 8601 style, as before (it counts days before the Gregorian
        // reform of 1582 by the Julian calendar).
        guard seconds >= -13_190_860_800, seconds < 252_423_993_600 else { return formatted(date) }
        let milliseconds = min(999, Int((time - seconds) * 1_000_000_000) / 1_000_000)
        let whole = Int(seconds) + 978_307_200
        let (days, second) = (whole.floorDivided(by: 86_400), whole.floorModulo(86_400))
        let (year, month, day) = civil(fromDays: days)
        return String(unsafeUninitializedCapacity: 24) { text in
            var at = 0
            func put(_ value: Int, digits: Int) {
                var value = value
                for offset in stride(from: digits - 1, through: 0, by: -1) {
                    text[at + offset] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                at += digits
            }
            func put(_ byte: Unicode.Scalar) {
                text[at] = UInt8(ascii: byte)
                at += 1
            }
            put(year, digits: 4); put("-"); put(month, digits: 2); put("-"); put(day, digits: 2); put("T")
            put(second / 3600, digits: 2); put(":"); put(second / 60 % 60, digits: 2); put(":"); put(second % 60, digits: 2)
            put("."); put(milliseconds, digits: 3); put("Z")
            return at
        }
    }

    /// Foundation's writing of the same format (what `string(from:)` gives outside years 1583…9999).
    static func formatted(_ date: Date) -> String {
        date.addingTimeInterval(0.0005).formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: true).timeSeparator(.colon).timeZone(separator: .omitted))
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = z.floorDivided(by: 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    public static func date(from string: String) -> Date? {
        if let d = try? Date(string, strategy: .iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: true).timeSeparator(.colon).timeZone(separator: .omitted)) { return d }
        return try? Date(string, strategy: .iso8601)
    }
}

extension Int {
    /// The quotient rounded towards minus infinity (`-1 / 86_400` is 0; this is -1).
    func floorDivided(by divisor: Int) -> Int {
        let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? quotient - 1 : quotient
    }

    /// The remainder of `floorDivided(by:)`, from 0 up to `divisor`.
    func floorModulo(_ divisor: Int) -> Int {
        let remainder = self % divisor
        return remainder < 0 ? remainder + divisor : remainder
    }
}
