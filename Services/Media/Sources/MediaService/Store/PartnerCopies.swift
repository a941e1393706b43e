import Foundation
import Logging
import PostgresNIO

/// media's own copy of who is paired with whom and of display names (tables `media.partners`, `media.names`),
/// kept from identity's events; media never reads identity's tables.
struct PartnerCopies: Sendable {
    let logger: Logger

    func partner(of user: UUID, client: PostgresClient) async throws -> UUID? {
        let rows = try await client.query("SELECT partner_id FROM media.partners WHERE user_id = \(user)", logger: logger)
        for try await id in rows.decode(UUID.self) { return id }
        return nil
    }

    func displayName(of user: UUID, client: PostgresClient) async throws -> String? {
        let rows = try await client.query("SELECT display_name FROM media.names WHERE user_id = \(user)", logger: logger)
        for try await name in rows.decode(String.self) { return name }
        return nil
    }

    /// Replaces both users' pairings with this one.
    func pair(_ a: UUID, _ b: UUID, pairing: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM media.partners WHERE user_id IN (\(a), \(b))", logger: logger)
        try await connection.query("""
            INSERT INTO media.partners (user_id, partner_id, pairing_id) VALUES (\(a), \(b), \(pairing)), (\(b), \(a), \(pairing))
            """, logger: logger)
    }

    func unpair(pairing: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM media.partners WHERE pairing_id = \(pairing)", logger: logger)
    }

    func rememberName(_ name: String, of user: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO media.names (user_id, display_name) VALUES (\(user), \(name))
            ON CONFLICT (user_id) DO UPDATE SET display_name = excluded.display_name
            """, logger: logger)
    }

    /// Forgets a deleted account: its pairing (as user or as partner) and its name.
    func forget(_ user: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM media.partners WHERE user_id = \(user) OR partner_id = \(user)", logger: logger)
        try await connection.query("DELETE FROM media.names WHERE user_id = \(user)", logger: logger)
    }
}
