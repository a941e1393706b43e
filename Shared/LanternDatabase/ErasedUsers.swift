import Crypto
import Foundation
import LanternCore
import Logging
import NIOCore
import PostgresNIO

/// Users erased by `user.deleted`, in a service's `<schema>.erased_users` (user_hash bytea PRIMARY KEY, erased_at
/// timestamptz), kept as a SHA-256 of the id, not the id. An access token outlives its account by up to its
/// lifetime, and work in flight (an upload, a drawing) outlives the deletion that raced it: what would bring the user
/// back checks here first. Kept 30 days (`housekeeping`), far beyond any token or job.
public enum ErasedUsers {
    /// The stored form of a user id: SHA-256 of its lower-case text.
    public static func hash(_ user: UUID) -> ByteBuffer { ByteBuffer(bytes: Array(SHA256.hash(data: Data(user.lowercased.utf8)))) }

    /// Records the erasure (idempotent), inside the transaction that deletes the user's rows.
    public static func record(_ user: UUID, at date: Date, schema: String, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("""
            INSERT INTO \(unescaped: schema).erased_users (user_hash, erased_at) VALUES (\(hash(user)), \(date)) ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    /// Whether the user was erased.
    public static func contains(_ user: UUID, schema: String, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query("SELECT 1 FROM \(unescaped: schema).erased_users WHERE user_hash = \(hash(user))", logger: logger)
        for try await _ in rows.decode(Int.self) { return true }
        return false
    }

    /// Forgets erasures after 30 days.
    public static func housekeeping(schema: String) -> Housekeeping.Rule {
        Housekeeping.Rule("erased_users", sql: "DELETE FROM \(schema).erased_users WHERE erased_at < $1", keep: 30 * 86_400)
    }
}
