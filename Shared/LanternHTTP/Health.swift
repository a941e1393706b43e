import Foundation
import Hummingbird
import LanternCore
import Synchronization

/// Named checks behind `/health/ready`: the process is ready when every dependency answers in time.
public struct ReadinessChecks: Sendable {
    public typealias Check = @Sendable () async throws -> Void
    var checks: [(name: String, run: Check)] = []

    public init() {}

    public mutating func add(_ name: String, _ check: @escaping Check) { checks.append((name, check)) }

    public struct Report: Codable, Sendable {
        public var status: String
        public var checks: [String: String]
    }

    /// Runs all checks concurrently, each bounded by `timeout`.
    public func run(timeout: Duration = .seconds(2)) async -> Report {
        let results = await withTaskGroup(of: (String, String).self) { group in
            for check in checks {
                group.addTask {
                    do {
                        try await withDeadline(timeout) { try await check.run() }
                        return (check.name, "ok")
                    } catch {
                        return (check.name, "failing: \(error)")
                    }
                }
            }
            var results: [String: String] = [:]
            for await (name, result) in group { results[name] = result }
            return results
        }
        return Report(status: results.values.allSatisfy { $0 == "ok" } ? "ok" : "unavailable", checks: results)
    }
}
