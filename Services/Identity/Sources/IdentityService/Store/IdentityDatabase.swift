import Foundation
import LanternCore
import LanternDatabase
import LanternEvents
import Logging
import PostgresNIO

/// identity's schema as its stores share it: one client, one outbox (every change others must hear of writes its
/// event in the same transaction), one clock.
struct IdentityDatabase: Sendable {
    static let schema = "identity"
    let client: PostgresClient
    let outbox: Outbox
    let clock: WallClock
    let logger: Logger

    /// What identity deletes once it has served its purpose.
    static let housekeeping: [Housekeeping.Rule] = [
        // Spent or expired refresh tokens are kept a week so a reuse is still recognised as one.
        .init("refresh_tokens", sql: "DELETE FROM identity.refresh_tokens WHERE expires_at < $1 OR spent_at < $1", keep: 7 * 86_400),
        .init("sessions", sql: """
            DELETE FROM identity.sessions s WHERE revoked_at < $1
               OR (NOT EXISTS (SELECT 1 FROM identity.refresh_tokens t WHERE t.session_id = s.id) AND last_seen_at < $1)
            """, keep: 30 * 86_400),
        // Used and expired invite codes explain themselves for a week ("expired", "already used"), then go.
        .init("pairing_invites", sql: "DELETE FROM identity.pairing_invites WHERE expires_at < $1", keep: 7 * 86_400),
        .processedEvents(schema: "identity"),
    ]
}

/// A store over identity's schema (one per aggregate: accounts, sessions, devices, pairing, signing keys).
protocol IdentityTables: Sendable {
    var db: IdentityDatabase { get }
}

extension IdentityTables {
    var client: PostgresClient { db.client }
    var outbox: Outbox { db.outbox }
    var clock: WallClock { db.clock }
    var logger: Logger { db.logger }
}
