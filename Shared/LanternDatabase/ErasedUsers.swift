import Crypto
import Foundation
import LanternCore
import Logging
import NIOCore
import PostgresNIO

/// Users erased by `user.deleted`, in a service's `<schema>.erased_users` (user_hash bytea PRIMARY KEY, erased_at
/// timestamptz), kept as a SHA-256 of the id, not the id, and the fence that keeps a write which raced the erasure
/// from leaving anything behind.
///
/// Tokens of a deleted account are refused at once (`ErasedAccounts`), but a request that passed the token check
/// just before can still be writing while the service's consumer erases the user: its row would commit after the
/// `DELETE` looked, and stay. So every write that creates a user's rows first passes `admit` (a shared advisory lock
/// on the user, then the tombstone is looked up), and the erasure first takes the same lock exclusively and records
/// the tombstone (`record`). A write admitted before waits out nothing and is erased with the rest; one that comes
/// later waits for the erasure to commit, then finds the tombstone and is refused (`AccountErased`, 401). Both run
/// as functions of the schema, `<schema>.admit_user(hash)` and `<schema>.erase_user(hash, at)`, because each of their
/// statements then reads anew after the lock is granted (a `VOLATILE` function's statements each take a new snapshot);
/// a single-statement write calls `admit_user` in its own SQL (`admitSQL`).
///
/// Tombstones are kept 30 days (`housekeeping`), far beyond any token or job.
public enum ErasedUsers {
    /// The stored form of a user id: SHA-256 of its lower-case text.
    public static func hash(_ user: UUID) -> ByteBuffer { ByteBuffer(bytes: Array(SHA256.hash(data: Data(user.lowercased.utf8)))) }

    /// The table (already made by the services that kept tombstones before the fence) and the two functions. It goes
    /// after the service's own migrations (`ServiceBuilder.addErasedUsers`). The lock is the two-key form, keyed by
    /// the schema and the hash's first four bytes, so services never wait on each other's erasures.
    public static let migration = Migration(id: "lantern_erased_users", sql: """
        CREATE TABLE IF NOT EXISTS {{schema}}.erased_users (
            user_hash bytea       PRIMARY KEY,
            erased_at timestamptz NOT NULL
        );
        CREATE OR REPLACE FUNCTION {{schema}}.admit_user(hash_in bytea) RETURNS boolean
            LANGUAGE plpgsql VOLATILE AS $fence$
        BEGIN
            PERFORM pg_advisory_xact_lock_shared(hashtext('{{schema}}'), ('x' || encode(substring(hash_in FROM 1 FOR 4), 'hex'))::bit(32)::int);
            RETURN NOT EXISTS (SELECT 1 FROM {{schema}}.erased_users e WHERE e.user_hash = hash_in);
        END
        $fence$;
        CREATE OR REPLACE FUNCTION {{schema}}.erase_user(hash_in bytea, at_in timestamptz) RETURNS void
            LANGUAGE plpgsql VOLATILE AS $fence$
        BEGIN
            PERFORM pg_advisory_xact_lock(hashtext('{{schema}}'), ('x' || encode(substring(hash_in FROM 1 FOR 4), 'hex'))::bit(32)::int);
            INSERT INTO {{schema}}.erased_users (user_hash, erased_at) VALUES (hash_in, at_in) ON CONFLICT DO NOTHING;
        END
        $fence$;
        """)

    /// Records the erasure (idempotent) as the first step of the transaction that deletes the user's rows: waits for
    /// the writes admitted before, and keeps out those that come after.
    public static func record(_ user: UUID, at date: Date, schema: String, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SELECT \(unescaped: schema).erase_user(\(hash(user)), \(date))", logger: logger)
    }

    /// Admits a write of the user's rows, as the first statement of its transaction; throws `AccountErased` if the
    /// user was erased. The admission holds until the transaction ends.
    public static func admit(_ user: UUID, schema: String, on connection: PostgresConnection, logger: Logger) async throws {
        let rows = try await connection.query("SELECT \(unescaped: schema).admit_user(\(hash(user)))", logger: logger)
        for try await admitted in rows.decode(Bool.self) where admitted { return }
        throw AccountErased()
    }

    /// `<schema>.admit_user($n)`, for a single-statement write that admits itself (its parameter: `hash(user)`), e.g.
    /// `INSERT … SELECT … WHERE <admitSQL>`; a write that inserted nothing for that reason answers `AccountErased`.
    public static func admitSQL(schema: String, parameter: Int) -> String { "\(schema).admit_user($\(parameter))" }

    /// Whether the user was erased (a read; it takes no lock).
    public static func contains(_ user: UUID, schema: String, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query("SELECT 1 FROM \(unescaped: schema).erased_users WHERE user_hash = \(hash(user))", logger: logger)
        for try await _ in rows.decode(Int.self) { return true }
        return false
    }

    /// Whether the user was erased, on a connection of `client`.
    public static func contains(_ user: UUID, schema: String, client: PostgresClient, logger: Logger) async throws -> Bool {
        try await client.withConnection { try await contains(user, schema: schema, on: $0, logger: logger) }
    }

    /// Forgets erasures after 30 days.
    public static func housekeeping(schema: String) -> Housekeeping.Rule {
        Housekeeping.Rule("erased_users", sql: "DELETE FROM \(schema).erased_users WHERE erased_at < $1", keep: 30 * 86_400)
    }
}

extension PostgresClient {
    /// A transaction that writes the user's rows, admitted by the erasure fence first (`ErasedUsers.admit`).
    public func transaction<Result>(
        admitting user: UUID, schema: String, logger: Logger,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        try await transaction(logger: logger, isolation: isolation) { connection in
            try await ErasedUsers.admit(user, schema: schema, on: connection, logger: logger)
            return try await body(connection)
        }
    }
}
