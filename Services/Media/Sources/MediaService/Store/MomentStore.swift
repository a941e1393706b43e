import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import Logging
import PostgresNIO

/// The SQL of moments and upload keys (schema `media`); a moment's row, its event, its real-time frame and its
/// pushes commit together.
struct MomentStore: MomentRecords {
    static let schema = "media"
    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger

    /// Idempotency keys protect an app's retries of one upload, which happen within minutes.
    static let housekeeping: [Housekeeping.Rule] = [
        .init("upload_keys", sql: "DELETE FROM media.upload_keys WHERE sent_at < $1", keep: 86_400),
        .processedEvents(schema: "media"),
    ]

    func partner(of user: UUID) async throws -> UUID? {
        try await PartnerCopies(logger: logger).partner(of: user, client: client)
    }

    func displayName(of user: UUID) async throws -> String? {
        try await PartnerCopies(logger: logger).displayName(of: user, client: client)
    }

    /// A previous upload with this key, if any: the same body gives its receipt again, another body is an error.
    func previousUpload(sender: UUID, key: String, requestHash: String) async throws -> MomentReceipt? {
        // The receipt is stored with the key: a replay answers the same even after the photo was replaced.
        let rows = try await client.query("""
            SELECT request_hash, receipt FROM media.upload_keys WHERE sender_id = \(sender) AND key = \(key)
            """, logger: logger)
        for try await (hash, receipt) in rows.decode((String, String).self) {
            guard hash == requestHash else { throw SharingFailure.keyReused }
            return try JSONDecoder.lantern.decode(MomentReceipt.self, from: Data(receipt.utf8))
        }
        return nil
    }

    /// Makes `moment` the receiver's current one and announces it; returns the storage key it replaced. The sender is
    /// admitted past the erasure fence first (`ErasedUsers`): a sender erased meanwhile writes nothing (401).
    func replace(with moment: Moment, idempotencyKey: String?, requestHash: String) async throws -> String? {
        let replaced: String? = try await client.transaction(admitting: moment.senderID, schema: Self.schema, logger: logger) { connection in
            // The pairing must still hold when the photo lands: a concurrent `pairing.dissolved` waits for this
            // share lock and then erases what we wrote, or we see it gone and refuse.
            let partner = try await connection.query("""
                SELECT partner_id FROM media.partners WHERE user_id = \(moment.senderID) FOR SHARE
                """, logger: logger)
            var current: UUID?
            for try await id in partner.decode(UUID.self) { current = id }
            guard current == moment.receiverID else { throw SharingFailure.notPaired }
            if let idempotencyKey {
                let rows = try await connection.query("""
                    INSERT INTO media.upload_keys (sender_id, key, request_hash, moment_id, sent_at, receipt, receiver_id)
                    VALUES (\(moment.senderID), \(idempotencyKey), \(requestHash), \(moment.id), \(moment.sentAt), \(try Self.json(moment.receipt)),
                            \(moment.receiverID))
                    ON CONFLICT DO NOTHING RETURNING moment_id
                    """, logger: logger)
                var inserted = false
                for try await _ in rows { inserted = true }
                if !inserted { throw SharingFailure.concurrentRetry }  // a concurrent retry won; answer with its receipt
            }
            let old = try await connection.query("SELECT storage_key FROM media.moments WHERE receiver_id = \(moment.receiverID) FOR UPDATE", logger: logger)
            var replaced: String?
            for try await key in old.decode(String.self) { replaced = key }
            try await connection.query("""
                INSERT INTO media.moments (receiver_id, id, sender_id, storage_key, content_type, byte_size, width, height, etag, sent_at)
                VALUES (\(moment.receiverID), \(moment.id), \(moment.senderID), \(moment.storageKey), \(moment.contentType), \(moment.byteSize),
                        \(moment.width), \(moment.height), \(moment.etag), \(moment.sentAt))
                ON CONFLICT (receiver_id) DO UPDATE SET id = excluded.id, sender_id = excluded.sender_id, storage_key = excluded.storage_key,
                    content_type = excluded.content_type, byte_size = excluded.byte_size, width = excluded.width, height = excluded.height,
                    etag = excluded.etag, sent_at = excluded.sent_at
                """, logger: logger)
            let announced = try MomentAnnouncements(moment)
            try await outbox.enqueue(announced.event, subject: announced.event.receiverId, at: moment.sentAt, on: connection, logger: logger)
            try await outbox.enqueue(announced.frames, at: moment.sentAt, on: connection, logger: logger)
            try await outbox.enqueue(announced.pushes, at: moment.sentAt, on: connection, logger: logger)
            return replaced
        }
        outbox.committed()
        return replaced
    }

    static func json(_ receipt: MomentReceipt) throws -> String {
        String(decoding: try JSONEncoder.lantern.encode(receipt), as: UTF8.self)
    }

    /// The receiver's current moment (never the caller's own uploads).
    func current(for receiver: UUID) async throws -> Moment? {
        let rows = try await client.query("""
            SELECT m.id, m.sender_id, n.display_name, m.storage_key, m.content_type, m.byte_size, m.width, m.height, m.etag, m.sent_at
            FROM media.moments m LEFT JOIN media.names n ON n.user_id = m.sender_id WHERE m.receiver_id = \(receiver)
            """, logger: logger)
        for try await (id, sender, name, key, type, size, width, height, etag, sentAt) in rows.decode((UUID, UUID, String?, String, String, Int, Int, Int, String, Date).self) {
            return Moment(id: id, senderID: sender, receiverID: receiver, senderName: name, storageKey: key, contentType: type,
                          byteSize: size, width: width, height: height, etag: etag, sentAt: sentAt)
        }
        return nil
    }

    /// Deletes every moment the user sent or received, inside the caller's transaction; returns their storage keys.
    func erase(momentsOf user: UUID, on connection: PostgresConnection) async throws -> [String] {
        let rows = try await connection.query("""
            DELETE FROM media.moments WHERE sender_id = \(user) OR receiver_id = \(user) RETURNING storage_key
            """, logger: logger)
        var keys: [String] = []
        for try await key in rows.decode(String.self) { keys.append(key) }
        return keys
    }

    /// Forgets the idempotency keys the user sent and the partner's receipts that name the user as receiver, inside
    /// the caller's transaction.
    func forgetUploadKeys(of user: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM media.upload_keys WHERE sender_id = \(user) OR receiver_id = \(user)", logger: logger)
    }
}
