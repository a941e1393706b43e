import Foundation
import Hummingbird
import LanternRedis
import PostgresNIO

/// Named checks behind `/health/ready`: the process is ready when every dependency answers in time.
public struct ReadinessChecks: Sendable {
    public typealias Check = @Sendable () async throws -> Void
    var checks: [(name: String, run: Check)] = []

    public init() {}

    public mutating func add(_ name: String, _ check: @escaping Check) { checks.append((name, check)) }

    public mutating func addPostgres(_ client: PostgresClient) {
        add("postgres") { try await client.query("SELECT 1") }
    }

    public mutating func addRedis(_ redis: RedisClient) {
        add("redis") { try await redis.send("PING") }
    }

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
                        try await withTimeout(timeout) { try await check.run() }
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

public struct TimeoutError: Error, CustomStringConvertible {
    public var description: String { "timed out" }
}

/// Runs `body`, throwing `TimeoutError` if it takes longer than `timeout`.
public func withTimeout<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TimeoutError()
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw TimeoutError() }
        return first
    }
}
