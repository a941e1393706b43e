import Foundation
import Logging

/// The log handler of every executable: one line per entry on standard output, as JSON (`LOG_FORMAT=json`, the
/// default: `{"time":…,"level":…,"logger":…,"message":…,<metadata>…}`, what log collectors parse) or as text
/// (`LOG_FORMAT=text`, what `make up` writes for people: `<time> <level> <label>: <message> key=value…`).
///
/// Why not swift-log's `StreamLogHandler`: it renders its metadata into a string each time a key is set, and every
/// request sets `request_id` — that rendering (sorting, formatting) was a measurable part of the gateway's
/// instructions per proxied request, for lines that are almost never written. Here metadata is kept as it is and
/// rendered only for an entry that is written.
public struct LogLine: LogHandler {
    public enum Format: String, Sendable {
        case json, text
    }

    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level = .info
    let label: String
    let format: Format
    let write: @Sendable (String) -> Void

    public init(label: String, format: Format = .text, metadataProvider: Logger.MetadataProvider? = nil,
                write: @escaping @Sendable (String) -> Void = LogLine.standardOutput) {
        self.label = label
        self.format = format
        self.metadataProvider = metadataProvider
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?, source: String,
                    file: String, function: String, line: UInt) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit { merged.merge(explicit) { _, new in new } }
        let time = Date.now.formatted(.iso8601)
        switch format {
        case .text:
            var text = "\(time) \(level) \(label): \(message)"
            for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
                text += " \(key)=\(Self.quoted("\(value)"))"
            }
            write(text + "\n")
        case .json:
            var json = "{\"time\":\(Self.jsonString(time)),\"level\":\(Self.jsonString(level.rawValue)),\"logger\":\(Self.jsonString(label)),"
                + "\"message\":\(Self.jsonString(message.description))"
            for (key, value) in merged.sorted(by: { $0.key < $1.key }) where !["time", "level", "logger", "message"].contains(key) {
                json += ",\(Self.jsonString(key)):\(Self.json(value))"
            }
            write(json + "}\n")
        }
    }

    /// A metadata value as JSON: strings as strings, lists and dictionaries as JSON arrays and objects.
    static func json(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let string): return jsonString(string)
        case .stringConvertible(let convertible): return jsonString(convertible.description)
        case .array(let items): return "[" + items.map(json).joined(separator: ",") + "]"
        case .dictionary(let entries):
            return "{" + entries.sorted(by: { $0.key < $1.key }).map { "\(jsonString($0.key)):\(json($0.value))" }.joined(separator: ",") + "}"
        }
    }

    /// A JSON string literal (RFC 8259 §7): quotes, backslashes and control characters escaped.
    static func jsonString(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// A value with spaces, quotes or `=` is quoted, so a line splits back into its fields.
    public static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n") + "\""
    }

    public static let standardOutput: @Sendable (String) -> Void = { text in
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
