import Foundation
import LanternDatabase
import Logging
import NIOCore
import PostgresNIO

/// Share cards already drawn (`content.roast_cards`): the PNG of a roast in a template and format, by drawing version.
struct CardStore: CardRecords {
    let client: PostgresClient
    let logger: Logger

    func card(roast: UUID, template: String, format: String, version: Int) async throws -> Data? {
        for try await png in try await client.query("""
            SELECT png FROM content.roast_cards WHERE roast_id = \(roast) AND template = \(template) AND format = \(format) AND version = \(version)
            """, logger: logger).decode(ByteBuffer.self) {
            return Data(buffer: png)
        }
        return nil
    }

    /// Keeps a drawn card, unless its user was erased meanwhile (the erasure fence, `ErasedUsers`).
    func keep(_ png: Data, roast: UUID, user: UUID, template: String, format: String, version: Int, at date: Date) async throws {
        try await client.query("""
            INSERT INTO content.roast_cards (roast_id, template, format, version, user_id, png, created_at)
            SELECT \(roast), \(template), \(format), \(version), \(user), \(ByteBuffer(data: png)), \(date)
            WHERE content.admit_user(\(ErasedUsers.hash(user)))
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    func erase(_ user: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM content.roast_cards WHERE user_id = \(user)", logger: logger)
    }
}
