import Foundation
import LanternTestSupport

/// Package.swift as SwiftPM itself reads it (`swift package dump-package`), so tests need not parse Swift.
struct PackageManifest: Decodable {
    struct Product: Decodable {
        var name: String
        var type: [String: AnyDecodable]
        var isExecutable: Bool { type.keys.contains("executable") }
    }
    struct Target: Decodable {
        var name: String
        var path: String?
        var type: String
        var dependencies: [[String: [String?]]]
        /// Targets named in `dependencies` (by name or as targets of this package); products of other packages aside.
        var localDependencies: Set<String> {
            Set(dependencies.flatMap { dependency in
                ["byName", "target"].compactMap { dependency[$0]?.first ?? nil }
            })
        }
    }
    var products: [Product]
    var targets: [Target]

    /// Decodes anything and keeps nothing (the product type's payload is not needed).
    struct AnyDecodable: Decodable { init(from decoder: any Decoder) throws {} }

    static func load() async throws -> PackageManifest {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("lantern-manifest-\(ProcessInfo.processInfo.processIdentifier)-\(UUID())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        // A scratch path of its own: `swift test` holds the lock of .build while this runs.
        let output = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"),
                                                ["swift", "package", "--package-path", ComposeTests.root.path, "--scratch-path", scratch.path, "dump-package"])
        return try JSONDecoder().decode(PackageManifest.self, from: output.stdout)
    }
}
