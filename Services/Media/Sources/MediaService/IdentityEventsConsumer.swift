import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import Logging
import PostgresNIO

/// Keeps media's copy of partnerships and names, and erases photos when a pairing ends or an account goes.
///
/// Each handler's writes and the event's id commit together (`ProcessedEvents`), so a redelivered event changes
/// nothing; photo bytes are deleted only after the rows are gone.
struct IdentityEventsConsumer: Sendable {
    let store: MomentStore
    let storage: any MomentStorage
    let processed = ProcessedEvents(schema: MomentStore.schema, consumer: "media.identity")

    var handlers: EventHandlers {
        var handlers = EventHandlers()
        handlers.on(IdentityEvents.PairingEstablished.self) { pairing, event in
            guard pairing.userIds.count == 2 else { return }
            let id = try UndecodablePayload.uuid(pairing.pairingId, field: "pairingId")
            let (a, b) = (try UndecodablePayload.uuid(pairing.userIds[0], field: "userIds"), try UndecodablePayload.uuid(pairing.userIds[1], field: "userIds"))
            try await once(event) { connection, logger in
                try await connection.query("DELETE FROM media.partners WHERE user_id IN (\(a), \(b))", logger: logger)
                try await connection.query("""
                    INSERT INTO media.partners (user_id, partner_id, pairing_id) VALUES (\(a), \(b), \(id)), (\(b), \(a), \(id))
                    """, logger: logger)
                return []
            }
        }
        handlers.on(IdentityEvents.PairingDissolved.self) { pairing, event in
            let id = try UndecodablePayload.uuid(pairing.pairingId, field: "pairingId")
            try await once(event) { connection, logger in
                try await connection.query("DELETE FROM media.partners WHERE pairing_id = \(id)", logger: logger)
                var erased: [String] = []
                for user in try pairing.userIds.map({ try UndecodablePayload.uuid($0, field: "userIds") }) {
                    erased += try await eraseMoments(of: user, on: connection)
                }
                return erased
            }
        }
        handlers.on(IdentityEvents.UserDeleted.self) { deleted, event in
            let user = try UndecodablePayload.uuid(deleted.userId, field: "userId")
            try await once(event) { connection, logger in
                try await connection.query("DELETE FROM media.partners WHERE user_id = \(user) OR partner_id = \(user)", logger: logger)
                try await connection.query("DELETE FROM media.names WHERE user_id = \(user)", logger: logger)
                try await connection.query("DELETE FROM media.upload_keys WHERE sender_id = \(user)", logger: logger)
                return try await eraseMoments(of: user, on: connection)
            }
        }
        handlers.on(IdentityEvents.UserCreated.self) { created, event in
            try await rememberName(created.displayName, of: created.userId, event: event)
        }
        handlers.on(IdentityEvents.ProfileRenamed.self) { renamed, event in
            try await rememberName(renamed.displayName, of: renamed.userId, event: event)
        }
        return handlers
    }

    private func rememberName(_ name: String?, of userId: String, event: EventEnvelope) async throws {
        guard let name else { return }
        let user = try UndecodablePayload.uuid(userId, field: "userId")
        try await once(event) { connection, logger in
            try await connection.query("""
                INSERT INTO media.names (user_id, display_name) VALUES (\(user), \(name))
                ON CONFLICT (user_id) DO UPDATE SET display_name = excluded.display_name
                """, logger: logger)
            return []
        }
    }

    /// Runs `body` once per event id; then deletes the storage keys it returns.
    private func once(_ event: EventEnvelope, _ body: (PostgresConnection, Logger) async throws -> [String]) async throws {
        let logger = store.logger
        var erased: [String] = []
        try await processed.once(event.id, client: store.client, logger: logger) { connection in
            erased = try await body(connection, logger)
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
