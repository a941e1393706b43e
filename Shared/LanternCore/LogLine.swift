import Foundation
import Logging

/// The log handler of every executable: one line per entry on standard output, `<time> <level> <label>: <message> key=value…`.
///
/// Why not swift-log's `StreamLogHandler`: it renders its metadata into a string each time a key is set, and every
/// request sets `request_id` — that rendering (sorting, formatting) was a measurable part of the gateway's
/// instructions per proxied request, for lines that are almost never written. Here metadata is kept as it is and
/// rendered only for an entry that is written.
public struct LogLine: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level = .info
    let label: String
    let write: @Sendable (String) -> Void

    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil,
                write: @escaping @Sendable (String) -> Void = LogLine.standardOutput) {
        self.label = label
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
        var text = "\(Date.now.formatted(.iso8601)) \(level) \(label): \(message)"
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            text += " \(key)=\(Self.quoted("\(value)"))"
        }
        write(text + "\n")
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
