import Foundation
import LanternCore
import LanternDatabase
import LanternEvents
import Logging
import PostgresNIO

/// Keeps media's copy of partnerships and names, and erases photos when a pairing ends or an account goes.
struct IdentityEventsConsumer: Sendable {
    let store: MomentStore
    let storage: any MomentStorage
    let processed = ProcessedEvents(schema: MomentStore.schema, consumer: "media.identity")

    struct Pairing: Decodable { var pairingId: UUID; var userIds: [UUID] }
    struct Named: Decodable { var userId: UUID; var displayName: String? }
    struct Deleted: Decodable { var userId: UUID }

    func handle(_ event: EventEnvelope) async throws {
        let logger = store.logger
        var erased: [String] = []
        try await processed.once(event.id, client: store.client, logger: logger) { connection in
            switch event.type {
            case "pairing.established":
                let pairing = try event.payload(as: Pairing.self)
                guard pairing.userIds.count == 2 else { return }
                let (a, b) = (pairing.userIds[0], pairing.userIds[1])
                try await connection.query("DELETE FROM media.partners WHERE user_id IN (\(a), \(b))", logger: logger)
                try await connection.query("""
                    INSERT INTO media.partners (user_id, partner_id, pairing_id) VALUES (\(a), \(b), \(pairing.pairingId)), (\(b), \(a), \(pairing.pairingId))
                    """, logger: logger)
            case "pairing.dissolved":
                let pairing = try event.payload(as: Pairing.self)
                try await connection.query("DELETE FROM media.partners WHERE pairing_id = \(pairing.pairingId)", logger: logger)
                for user in pairing.userIds {
                    erased += try await eraseMoments(of: user, on: connection)
                }
            case "user.deleted":
                let user = try event.payload(as: Deleted.self).userId
                try await connection.query("DELETE FROM media.partners WHERE user_id = \(user) OR partner_id = \(user)", logger: logger)
                try await connection.query("DELETE FROM media.names WHERE user_id = \(user)", logger: logger)
                try await connection.query("DELETE FROM media.upload_keys WHERE sender_id = \(user)", logger: logger)
                erased += try await eraseMoments(of: user, on: connection)
            case "user.created", "profile.renamed":
                let named = try event.payload(as: Named.self)
                guard let name = named.displayName else { return }
                try await connection.query("""
                    INSERT INTO media.names (user_id, display_name) VALUES (\(named.userId), \(name))
                    ON CONFLICT (user_id) DO UPDATE SET display_name = excluded.display_name
                    """, logger: logger)
            default:
                return
            }
        }
        // Bytes go after the rows are gone: a crash in between leaves an orphan file, never a row without bytes.
        for key in erased { try await storage.delete(key: key) }
    }

    /// Deletes every moment the user sent or received; returns their storage keys.
    private func eraseMoments(of user: UUID, on connection: PostgresConnection) async throws -> [String] {
        let rows = try await connection.query("""
            DELETE FROM media.moments WHERE sender_id = \(user) OR receiver_id = \(user) RETURNING storage_key
            """, logger: store.logger)
        var keys: [String] = []
        for try await key in rows.decode(String.self) { keys.append(key) }
        return keys
    }
}
