import ContentKit
@testable import ContentService
import Foundation
import LanternCore
import Testing

@Suite("content's assembly: one target per app, each listed once")
struct ContentAssemblyTests {
    /// `Services/Content/Sources`, from this file's place in the repository.
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    @Test("every app folder (Sources/<App> with <App>App.swift) is in ContentApps.all, once; tasks and migration ids do not collide")
    func everyAppIsMounted() throws {
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.sources.path)
            .filter { FileManager.default.fileExists(atPath: Self.sources.appendingPathComponent($0).appendingPathComponent("\($0)App.swift").path) }
        #expect(Set(folders.map { $0.lowercased() }) == Set(ContentApps.all.map(\.app.rawValue)), "\(folders)")
        #expect(ContentApps.all.count == Set(ContentApps.all.map(\.app)).count)
        let tasks = ContentApps.all.flatMap(\.llmTasks)
        #expect(tasks.count == Set(tasks).count && ContentConfiguration.tasks == tasks)
        let migrations = try ContentApps.all.flatMap { try $0.migrations() }.map(\.id)
        #expect(migrations.count == Set(migrations).count && migrations.contains("0001_luckyday") && migrations.contains("0002_astrosvitla"))
        let grammars = try ContentApps.all.map { try $0.grammars() }
        #expect(grammars.flatMap(\.keys).count == Set(grammars.flatMap(\.keys)).count, "two apps define a grammar for the same task")
    }

    @Test("an app's bad configuration value stops the start, naming the variable")
    func appConfiguration() throws {
        let base = ["DATABASE_URL": "postgres://x@127.0.0.1/x"]
        #expect(try ContentConfiguration(settings: .fixed(base)).apps.count == ContentApps.all.count)
        for (variable, value) in [("LUCKYDAY_QUIET_HOURS", "late"), ("REPORT_BUDGET_SECONDS", "0"), ("FORTUNE_BUDGET_SECONDS", "ten")] {
            #expect {
                _ = try ContentConfiguration(settings: .fixed(base.merging([variable: value]) { $1 }))
            } throws: { error in
                (error as? ConfigurationError)?.variable == variable
            }
        }
    }
}
