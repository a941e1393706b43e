import Foundation
import Testing

/// The service template (docs/new-service.md): routes decode, the domain decides, stores persist.
@Suite("Service layout")
struct LayoutTests {
    /// What a domain file must not import: HTTP, SQL, Redis, networking, the transport and the assembly.
    static let notInDomain: Set<String> = [
        "Hummingbird", "HummingbirdCore", "HummingbirdWebSocket", "PostgresNIO", "AsyncHTTPClient", "NIOCore", "NIOPosix", "NIOHTTP1",
        "LanternHTTP", "LanternDatabase", "LanternRedis", "LanternEvents", "LanternService", "LanternTokens",
    ]

    static func swiftFiles(under folder: URL) -> [URL] {
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
    }

    static func imports(of file: URL) throws -> Set<String> {
        let text = try String(contentsOf: file, encoding: .utf8)
        return Set(text.split(separator: "\n").compactMap { line in
            line.firstMatch(of: /^(?:@testable |public |internal |package )?import (?:struct |enum |class |func )?([A-Za-z0-9_]+)/).map { String($0.1) }
        })
    }

    /// The library folders of the services (`Services/<Name>/Sources/<Library>` holding `Application+build.swift`).
    static func serviceLibraries() -> [URL] {
        let services = ComposeTests.root.appendingPathComponent("Services")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: services.path)) ?? []
        return names.sorted().flatMap { name -> [URL] in
            let sources = services.appendingPathComponent(name).appendingPathComponent("Sources")
            let targets = (try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? []
            return targets.sorted().map { sources.appendingPathComponent($0) }
                .filter { FileManager.default.fileExists(atPath: $0.appendingPathComponent("Application+build.swift").path) }
        }
    }

    @Test("a Domain file imports Foundation and contracts, never HTTP, SQL, Redis or the transport")
    func domainIsPure() throws {
        var checked = 0
        for library in Self.serviceLibraries() {
            for file in Self.swiftFiles(under: library.appendingPathComponent("Domain")) {
                checked += 1
                let forbidden = try Self.imports(of: file).intersection(Self.notInDomain)
                #expect(forbidden.isEmpty, "\(library.lastPathComponent)/Domain/\(file.lastPathComponent) imports \(forbidden.sorted())")
            }
        }
        #expect(checked > 0)
    }
}
