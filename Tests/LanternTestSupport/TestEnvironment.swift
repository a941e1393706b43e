import Foundation
import LanternContracts
import LanternEvents
import LanternRedis
import Logging
import PostgresNIO

/// Where the test PostgreSQL and Redis are (started by `scripts/test.sh`), and per-test isolation on top of them:
/// each test gets a database of its own and a stream prefix of its own, so suites run in any order or in parallel.
public enum TestEnvironment {
    public static var postgresAdminURL: String {
        ProcessInfo.processInfo.environment["LANTERN_TEST_POSTGRES_URL"] ?? "postgres://postgres:lantern@127.0.0.1:54329/postgres"
    }

    public static var redisURL: String {
        ProcessInfo.processInfo.environment["LANTERN_TEST_REDIS_URL"] ?? "redis://127.0.0.1:63799/0"
    }

    public static var redisEndpoint: RedisEndpoint { (try? RedisEndpoint(url: redisURL)) ?? RedisEndpoint(port: 63799) }

    /// `REDIS_URL` for `service` signed in as a Redis user of its own with exactly the rights `RedisAccess` gives it
    /// under `prefix` (created in the test Redis, named `<prefix>-<service>`), so every test of a service also
    /// checks that its ACL lets it do its work: a command outside it fails with `NOPERM`.
    public static func redisURL(for service: String, prefix: String) async throws -> String {
        guard let access = RedisAccess.of(service) else { throw RedisAccessMissing(service: service) }
        let user = "\(prefix)-\(service)"
        let password = (0..<4).map { _ in String(UInt64.random(in: .min ... .max), radix: 36) }.joined()
        let admin = RedisClient(endpoint: redisEndpoint, size: 1)
        do {
            _ = try await admin.send(["ACL", "SETUSER", user] + access.rules(streams: StreamNames(prefix: prefix)) + [">" + password])
        } catch {
            await admin.shutdown()
            throw error
        }
        await admin.shutdown()
        let endpoint = redisEndpoint
        return "redis://\(user):\(password)@\(endpoint.host):\(endpoint.port)/\(endpoint.database)"
    }

    public struct RedisAccessMissing: Error, CustomStringConvertible {
        public var service: String
        public var description: String { "RedisAccess.all has no entry for \(service)" }
    }

    public static var logger: Logger {
        var logger = Logger(label: "test")
        logger.logLevel = ProcessInfo.processInfo.environment["LANTERN_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        return logger
    }

    /// A fresh stream prefix (`t1a2b3c4d`), so streams of one test never meet another's.
    public static func uniquePrefix() -> String { "t" + String(UInt32.random(in: .min ... .max), radix: 16) }

    /// Runs `body` with the URL of a new, empty database, dropped afterwards.
    public static func withDatabase<T>(_ body: (String) async throws -> T) async throws -> T {
        let name = "lantern_test_" + String(UInt64.random(in: .min ... .max), radix: 36)
        try await admin("CREATE DATABASE \(name)")
        do {
            let result = try await body(databaseURL(name))
            try? await admin("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            return result
        } catch {
            try? await admin("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            throw error
        }
    }

    public static func databaseURL(_ name: String) -> String {
        var components = URLComponents(string: postgresAdminURL)!
        components.path = "/" + name
        return components.string!
    }

    /// Runs `sql` on the admin database; a failure is tried twice more (a busy server under the whole suite) and
    /// then reported with PostgreSQL's own message.
    static func admin(_ sql: String) async throws {
        var attempt = 0
        while true {
            do {
                return try await adminOnce(sql)
            } catch {
                attempt += 1
                if attempt >= 3 { throw AdminFailure(sql: sql, cause: String(reflecting: error)) }
                try await Task.sleep(for: .milliseconds(200 * attempt))
            }
        }
    }

    struct AdminFailure: Error, CustomStringConvertible {
        var sql: String
        var cause: String
        var description: String { "\(sql): \(cause)" }
    }

    static func adminOnce(_ sql: String) async throws {
        let configuration = try PostgresClient.Configuration.lantern(url: postgresAdminURL)
        let connection = try await PostgresConnection.connect(
            configuration: .init(host: configuration.host ?? "127.0.0.1", port: configuration.port ?? 5432,
                                 username: configuration.username, password: configuration.password,
                                 database: configuration.database, tls: .disable),
            id: 1, logger: logger)
        defer { Task { try? await connection.close() } }
        try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
    }

    /// Runs `body` with a running `PostgresClient` for `url`.
    public static func withPostgres<T: Sendable>(_ url: String, _ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        let client = PostgresClient(configuration: try .lantern(url: url), backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}
