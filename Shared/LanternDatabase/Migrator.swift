import Foundation
import Logging
import PostgresNIO

/// One versioned schema change. `id` sorts in application order (`0001_accounts`, `0002_devices`, …).
public struct Migration: Sendable, Equatable {
    public let id: String
    public let sql: String
    public init(id: String, sql: String) {
        self.id = id
        self.sql = sql
    }

    /// Loads `NNNN_name.sql` files from a folder (a service's bundled `Migrations/`), sorted by name.
    public static func load(from directory: URL) throws -> [Migration] {
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        return try files.map { Migration(id: $0.deletingPathExtension().lastPathComponent, sql: try String(contentsOf: $0, encoding: .utf8)) }
    }
}

/// Applies a service's migrations to its own schema, once, even when several instances start together.
///
/// Everything happens in one transaction holding a transaction-level advisory lock keyed by the schema name:
/// a second instance waits, then sees the versions the first one recorded. DDL in PostgreSQL is transactional,
/// so a failing migration leaves nothing half-applied.
public enum Migrator {
    @discardableResult
    public static func migrate(schema: String, migrations: [Migration], client: PostgresClient, logger: Logger) async throws -> [String] {
        precondition(schema.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }, "schema names are identifiers")
        return try await client.transaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\("lantern.migrations." + schema)))", logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(schema)"), logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: """
                CREATE TABLE IF NOT EXISTS \(schema).schema_migrations (
                    id text PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT now())
                """), logger: logger)
            var applied = Set<String>()
            for try await id in try await connection.query(PostgresQuery(unsafeSQL: "SELECT id FROM \(schema).schema_migrations"), logger: logger).decode(String.self) {
                applied.insert(id)
            }
            var newlyApplied: [String] = []
            for migration in migrations where !applied.contains(migration.id) {
                let sql = migration.sql.replacingOccurrences(of: "{{schema}}", with: schema)
                for statement in SQLScript.statements(sql) {
                    do {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    } catch {
                        logger.critical("migration failed", metadata: ["schema": "\(schema)", "migration": "\(migration.id)", "error": "\(DatabaseErrors.describe(error))"])
                        throw error
                    }
                }
                try await connection.query("INSERT INTO \(unescaped: schema).schema_migrations (id) VALUES (\(migration.id))", logger: logger)
                newlyApplied.append(migration.id)
            }
            if !newlyApplied.isEmpty {
                logger.info("applied migrations", metadata: ["schema": "\(schema)", "migrations": "\(newlyApplied.joined(separator: ", "))"])
            }
            return newlyApplied
        }
    }
}
