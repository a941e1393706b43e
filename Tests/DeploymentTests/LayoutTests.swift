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

    /// The target folders `Services/<Name>/Sources/<Target>` that hold `entry(target)`.
    static func targets(holding entry: (String) -> String) -> [URL] {
        let services = ComposeTests.root.appendingPathComponent("Services")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: services.path)) ?? []
        return names.sorted().flatMap { name -> [URL] in
            let sources = services.appendingPathComponent(name).appendingPathComponent("Sources")
            let targets = (try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? []
            return targets.sorted().map { sources.appendingPathComponent($0) }
                .filter { FileManager.default.fileExists(atPath: $0.appendingPathComponent(entry($0.lastPathComponent)).path) }
        }
    }

    /// The library folders of the services (`Services/<Name>/Sources/<Library>` holding `Application+build.swift`).
    static func serviceLibraries() -> [URL] { targets { _ in "Application+build.swift" } }

    /// The app targets of a service that serves several apps (`Services/Content/Sources/<App>` holding `<App>App.swift`):
    /// the same template, with the app's entry point in place of `Application+build.swift`.
    static func appLibraries() -> [URL] { targets { "\($0)App.swift" } }

    @Test("a Domain file imports Foundation and contracts, never HTTP, SQL, Redis or the transport")
    func domainIsPure() throws {
        var checked = 0
        for library in Self.serviceLibraries() + Self.appLibraries() {
            for file in Self.swiftFiles(under: library.appendingPathComponent("Domain")) {
                checked += 1
                let forbidden = try Self.imports(of: file).intersection(Self.notInDomain)
                #expect(forbidden.isEmpty, "\(library.lastPathComponent)/Domain/\(file.lastPathComponent) imports \(forbidden.sorted())")
            }
        }
        #expect(checked > 0)
    }

    /// `folder` of every service and app library, with each Swift file's text.
    static func files(in folder: String) throws -> [(name: String, text: String)] {
        try (serviceLibraries() + appLibraries()).flatMap { library in
            try swiftFiles(under: library.appendingPathComponent(folder)).map {
                ("\(library.lastPathComponent)/\(folder)/\($0.lastPathComponent)", try String(contentsOf: $0, encoding: .utf8))
            }
        }
    }

    @Test("Routes decode and encode: no SQL and no PostgresNIO there; Store and Events persist and react: no Hummingbird there")
    func layersKeepToTheirWork() throws {
        let routes = try Self.files(in: "Routes")
        #expect(routes.count > 10)
        for (name, text) in routes {
            #expect(!text.contains("import PostgresNIO") && !text.contains(".query(") && !text.contains("SELECT "), "\(name) holds SQL")
        }
        for folder in ["Store", "Events"] {
            for (name, text) in try Self.files(in: folder) {
                let imports = text.split(separator: "\n").filter { $0.hasPrefix("import Hummingbird") }
                #expect(imports.isEmpty, "\(name) imports \(imports)")
            }
        }
    }

    @Test("a Domain file decides without HTTP: it throws or returns the domain's own outcomes, never a Problem (Routes turn them into problems)")
    func domainSpeaksNoHTTP() throws {
        for (name, text) in try Self.files(in: "Domain") {
            #expect(text.firstMatch(of: /\bProblem\b/) == nil, "\(name) uses Problem")
        }
    }

    @Test("every migration names its schema {{schema}}, so the schema's name lives in one place (the service's build)")
    func migrationsUseTheSchemaPlaceholder() throws {
        var checked = 0
        for library in Self.serviceLibraries() + Self.appLibraries() {
            let folder = library.appendingPathComponent("Migrations")
            let files = ((try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []).filter { $0.pathExtension == "sql" }
            for file in files {
                checked += 1
                let text = try String(contentsOf: file, encoding: .utf8)
                for match in text.matches(of: /(?i)(CREATE TABLE(?: IF NOT EXISTS)?|ALTER TABLE|REFERENCES|\bON) +([a-z_{}]+)\./) {
                    #expect(match.output.2 == "{{schema}}", "\(library.lastPathComponent)/Migrations/\(file.lastPathComponent): \(match.output.0)")
                }
            }
        }
        #expect(checked >= 8)
    }

    /// The folders a service library may have (docs/new-service.md).
    static let folders: Set<String> = ["Routes", "Domain", "Store", "Events", "Providers", "Migrations", "Catalogue", "Resources"]

    @Test("every service library is Application+build.swift and its configuration, the rest in the template's folders")
    func everyServiceFollowsTheTemplate() throws {
        let libraries = Self.serviceLibraries()
        #expect(libraries.count >= 5)
        for library in libraries {
            let entries = try FileManager.default.contentsOfDirectory(atPath: library.path)
            var isDirectory: ObjCBool = false
            let folders = Set(entries.filter { FileManager.default.fileExists(atPath: library.appendingPathComponent($0).path, isDirectory: &isDirectory) && isDirectory.boolValue })
            let swift = Set(entries.filter { $0.hasSuffix(".swift") })
            #expect(swift.contains("Application+build.swift") && swift.contains { $0.hasSuffix("Configuration.swift") }, "\(library.lastPathComponent)")
            #expect(swift.count == 2, "\(library.lastPathComponent) has code outside the template's folders: \(swift.sorted())")
            #expect(folders.isSubset(of: Self.folders), "\(library.lastPathComponent): \(folders.subtracting(Self.folders).sorted())")
            let source = try String(contentsOf: library.appendingPathComponent("Application+build.swift"), encoding: .utf8)
            #expect(source.contains("ServiceBuilder("), "\(library.lastPathComponent) is not assembled with ServiceBuilder")
        }
    }

    @Test("every app of a service is its <App>App.swift and <App>Configuration.swift, the rest in the template's folders")
    func everyAppFollowsTheTemplate() throws {
        let apps = Self.appLibraries()
        #expect(apps.map(\.lastPathComponent).contains("LuckyDay") && apps.map(\.lastPathComponent).contains("AstroSvitla"))
        for app in apps {
            let name = app.lastPathComponent
            let entries = try FileManager.default.contentsOfDirectory(atPath: app.path)
            var isDirectory: ObjCBool = false
            let folders = Set(entries.filter { FileManager.default.fileExists(atPath: app.appendingPathComponent($0).path, isDirectory: &isDirectory) && isDirectory.boolValue })
            let swift = Set(entries.filter { $0.hasSuffix(".swift") })
            #expect(swift == ["\(name)App.swift", "\(name)Configuration.swift"], "\(name) has code outside the template's folders: \(swift.sorted())")
            #expect(folders.isSubset(of: Self.folders), "\(name): \(folders.subtracting(Self.folders).sorted())")
            let source = try String(contentsOf: app.appendingPathComponent("\(name)App.swift"), encoding: .utf8)
            #expect(source.contains("ContentAppModule("), "\(name) does not describe itself with a ContentAppModule")
        }
    }
}
