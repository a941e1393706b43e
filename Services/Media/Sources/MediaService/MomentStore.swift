import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import Logging
import PostgresNIO

/// A stored moment's metadata.
struct Moment: Sendable, Equatable {
    var id: UUID
    var senderID: UUID
    var receiverID: UUID
    var senderName: String?
    var storageKey: String
    var contentType: String
    var byteSize: Int
    var width: Int
    var height: Int
    var etag: String
    var sentAt: Date
}

/// The answer to an upload (also what a retried upload with the same Idempotency-Key gets back).
public struct MomentReceipt: Codable, Sendable, Equatable {
    public var momentId: String
    public var receiverId: String
    public var sentAt: Date
    public var width: Int
    public var height: Int
    public var byteSize: Int
    public var contentType: String
}

enum UploadOutcome: Sendable {
    case stored(MomentReceipt, replacedKey: String?)
}

enum UploadFailure: Error {
    case notPaired
    case keyReused
}

/// All SQL of the `media` schema.
struct MomentStore: Sendable {
    static let schema = "media"
    let client: PostgresClient
    let outbox: Outbox
    let clock: WallClock
    let logger: Logger

    /// Idempotency keys protect an app's retries of one upload, which happen within minutes.
    static let housekeeping: [Housekeeping.Rule] = [
        .init("upload_keys", sql: "DELETE FROM media.upload_keys WHERE sent_at < $1", keep: 86_400),
        .processedEvents(schema: "media"),
    ]

    func partner(of userID: UUID) async throws -> UUID? {
        let rows = try await client.query("SELECT partner_id FROM media.partners WHERE user_id = \(userID)", logger: logger)
        for try await id in rows.decode(UUID.self) { return id }
        return nil
    }

    /// A previous upload with this key, if any: the same body gives its receipt again, another body is an error.
    func previousUpload(sender: UUID, key: String, requestHash: String) async throws -> MomentReceipt? {
        // The receipt is stored with the key: a replay answers the same even after the photo was replaced.
        let rows = try await client.query("""
            SELECT request_hash, receipt FROM media.upload_keys WHERE sender_id = \(sender) AND key = \(key)
            """, logger: logger)
        for try await (hash, receipt) in rows.decode((String, String).self) {
            guard hash == requestHash else { throw UploadFailure.keyReused }
            return try JSONDecoder.lantern.decode(MomentReceipt.self, from: Data(receipt.utf8))
        }
        return nil
    }

    /// Makes `moment` the receiver's current one and announces it; returns the storage key it replaced.
    func replace(with moment: Moment, idempotencyKey: String?, requestHash: String) async throws -> UploadOutcome {
        let outcome: UploadOutcome = try await client.transaction(logger: logger) { connection in
            // The pairing must still hold when the photo lands: a concurrent `pairing.dissolved` waits for this
            // share lock and then erases what we wrote, or we see it gone and refuse.
            let partner = try await connection.query("""
                SELECT partner_id FROM media.partners WHERE user_id = \(moment.senderID) FOR SHARE
                """, logger: logger)
            var current: UUID?
            for try await id in partner.decode(UUID.self) { current = id }
            guard current == moment.receiverID else { throw UploadFailure.notPaired }
            if let idempotencyKey {
                let rows = try await connection.query("""
                    INSERT INTO media.upload_keys (sender_id, key, request_hash, moment_id, sent_at, receipt)
                    VALUES (\(moment.senderID), \(idempotencyKey), \(requestHash), \(moment.id), \(moment.sentAt), \(try Self.receiptJSON(moment)))
                    ON CONFLICT DO NOTHING RETURNING moment_id
                    """, logger: logger)
                var inserted = false
                for try await _ in rows { inserted = true }
                if !inserted { throw UploadRace() }  // a concurrent retry won; answer with its receipt
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
            let receiver = moment.receiverID.lowercased
            try await outbox.enqueue(MediaEvents.MomentShared(momentId: moment.id.lowercased, senderId: moment.senderID.lowercased,
                                                              receiverId: receiver, senderName: moment.senderName,
                                                              sentAt: moment.sentAt, width: moment.width, height: moment.height),
                                     subject: receiver, at: moment.sentAt, on: connection, logger: logger)
            try await outbox.enqueue([PairlyFrames.newMoment(to: receiver, momentId: moment.id.lowercased, senderName: moment.senderName, sentAt: moment.sentAt)],
                                     at: moment.sentAt, on: connection, logger: logger)
            try await outbox.enqueue(PairlyMomentPush.requests(for: moment), at: moment.sentAt, on: connection, logger: logger)
            return .stored(Self.receipt(moment), replacedKey: replaced)
        }
        outbox.committed()
        return outcome
    }

    struct UploadRace: Error {}

    static func receiptJSON(_ moment: Moment) throws -> String {
        String(decoding: try JSONEncoder.lantern.encode(receipt(moment)), as: UTF8.self)
    }

    static func receipt(_ moment: Moment) -> MomentReceipt {
        MomentReceipt(momentId: moment.id.lowercased, receiverId: moment.receiverID.lowercased, sentAt: moment.sentAt,
                      width: moment.width, height: moment.height, byteSize: moment.byteSize, contentType: moment.contentType)
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

    func senderName(_ userID: UUID) async throws -> String? {
        let rows = try await client.query("SELECT display_name FROM media.names WHERE user_id = \(userID)", logger: logger)
        for try await name in rows.decode(String.self) { return name }
        return nil
    }
}


/// The pushes of a new moment: a silent one so the receiver's widget fetches the photo even when the app is
/// closed, and a visible one. Each collapses onto the previous moment's, as the photo itself replaces the old one.
enum PairlyMomentPush {
    static func requests(for moment: Moment) -> [PushRequest] {
        let data = ["momentId": moment.id.lowercased]
        let receiver = moment.receiverID.lowercased
        return [
            PushRequest(userId: receiver, app: AppID.pairly.rawValue, kind: "pairly.moment_shared", delivery: .background,
                        collapseKey: "pairly.moment.refresh", ttlSeconds: 24 * 3600, data: data),
            PushRequest(userId: receiver, app: AppID.pairly.rawValue, kind: "pairly.moment_shared", delivery: .alert,
                        messageKey: moment.senderName == nil ? "pairly.moment_shared.unnamed" : "pairly.moment_shared",
                        args: moment.senderName.map { ["partnerName": $0] }, collapseKey: "pairly.moment", ttlSeconds: 24 * 3600, data: data),
        ]
    }
}
