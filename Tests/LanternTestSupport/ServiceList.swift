import Foundation

/// The executables of the stack as `Services/services.tsv`, the one list, declares them: name, port, and the
/// variable through which other processes reach it.
public struct ServiceList: Sendable {
    public struct Service: Sendable, Equatable {
        public var name: String
        public var port: Int
        public var urlVariable: String?

        /// Its folder under `Services/` (`push-worker` → `PushWorker`).
        public var folder: String {
            name.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        }
    }

    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Where the built executables are: `LANTERN_BIN_PATH` (set by `make test`), else the debug build folder.
    public static var binPath: URL {
        if let path = ProcessInfo.processInfo.environment["LANTERN_BIN_PATH"] { return URL(fileURLWithPath: path) }
        return root.appendingPathComponent(".build/debug")
    }

    /// The services in start order.
    public static func load() throws -> [Service] {
        let text = try String(contentsOf: root.appendingPathComponent("Services/services.tsv"), encoding: .utf8)
        return try text.split(separator: "\n").compactMap { line -> Service? in
            let fields = line.split(whereSeparator: \.isWhitespace).map(String.init)
            guard let name = fields.first, !name.hasPrefix("#") else { return nil }
            guard fields.count >= 3, let port = Int(fields[1]) else { throw ServiceListError(line: String(line)) }
            return Service(name: name, port: port, urlVariable: fields[2] == "-" ? nil : fields[2])
        }
    }
}

public struct ServiceListError: Error, CustomStringConvertible {
    public var line: String
    public var description: String { "Services/services.tsv: expected 'name port variable', got '\(line)'" }
}
