import Foundation

/// A response type that writes its own JSON: the same bytes as `JSONEncoder.lantern` (keys sorted, slashes as they
/// are, RFC 3339 dates, nil members left out), without Codable's runtime, which costs the hottest answers (the
/// profile, a roast, a check-in) more than everything else they do in process (docs/benchmarks.md, #45).
///
/// A conforming type writes its members in sorted order and is listed in `JSONWritingTests`, which checks its bytes
/// against `JSONEncoder.lantern` for sample values; `JSONResponse` uses `writeJSON` when the value has it.
public protocol JSONWritable: Encodable {
    func writeJSON(to writer: inout JSONWriter)
}

extension JSONWritable {
    /// The value's JSON, as `JSONEncoder.lantern` would encode it.
    public var jsonBytes: [UInt8] {
        var writer = JSONWriter()
        writeJSON(to: &writer)
        return writer.bytes
    }
}

/// Writes JSON text into `bytes`: objects member by member, in the order given.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    private var needsComma = false

    public init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

    /// `{ … }`, with the members `body` writes.
    public mutating func object(_ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// `[ … ]` of `elements`, each written by `element`.
    public mutating func array<Elements: Sequence>(_ elements: Elements, _ element: (inout JSONWriter, Elements.Element) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
        for value in elements { element(&self, value) }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// A member's key; its value follows.
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        needsComma = false
    }

    public mutating func member(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    public mutating func member(_ name: StaticString, _ value: Int?) {
        guard let value else { return }
        key(name)
        number(value)
    }

    public mutating func member(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        key(name)
        bool(value)
    }

    public mutating func member(_ name: StaticString, _ value: Date?) {
        guard let value else { return }
        key(name)
        date(value)
    }

    public mutating func member(_ name: StaticString, _ values: [String]?) {
        guard let values else { return }
        key(name)
        array(values) { writer, value in writer.string(value) }
    }

    public mutating func member(_ name: StaticString, _ value: (some JSONWritable)?) {
        guard let value else { return }
        key(name)
        value.writeJSON(to: &self)
    }

    /// A string, escaped as Foundation's encoder escapes it: `"` and `\`, the control characters (`\b \f \n \r \t`
    /// by name, the rest as `\u00XX`); everything else as its UTF-8.
    public mutating func string(_ value: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { text in
            var start = 0
            for index in 0..<text.count {
                let byte = text[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: text[start..<index])
                start = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default:
                    bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                              Self.hex[Int(byte >> 4)], Self.hex[Int(byte & 0x0F)]])
                }
            }
            bytes.append(contentsOf: text[start..<text.count])
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    public mutating func number(_ value: Int) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
        needsComma = true
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
        needsComma = true
    }

    public mutating func date(_ value: Date) { string(RFC3339.string(from: value)) }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)
}
