import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import Logging
import PostgresNIO




/// Pairly pairing: invite codes and partnerships, in the identity schema.
struct PairingStore: IdentityTables {
    let db: IdentityDatabase
    /// How long a code stays valid.
    let inviteLifetime: TimeInterval = 24 * 3600

    /// The user's live code, or a new one. Paired users get `alreadyPaired`.
    func invite(for userID: UUID) async throws -> (Invite, created: Bool) {
        let now = clock.now()
        for _ in 0..<5 {
            let outcome: (Invite, Bool)? = try await client.transaction(logger: logger) { connection in
                // Serialise concurrent "generate" taps of one user (user rows are always locked first, see `join`).
                try await lockUsers([userID], on: connection)
                if try await partnerRow(of: userID, on: connection) != nil { throw JoinFailure.alreadyPaired }
                let live = try await connection.query("""
                    SELECT code, expires_at FROM identity.pairing_invites
                    WHERE user_id = \(userID) AND used_at IS NULL AND expires_at > \(now) ORDER BY created_at DESC LIMIT 1
                    """, logger: logger)
                for try await (code, expires) in live.decode((String, Date).self) { return (Invite(code: code, expiresAt: expires), false) }
                let code = InviteCode.generate()
                let expires = now.addingTimeInterval(inviteLifetime)
                let rows = try await connection.query("""
                    INSERT INTO identity.pairing_invites (code, user_id, created_at, expires_at) VALUES (\(code), \(userID), \(now), \(expires))
                    ON CONFLICT (code) DO NOTHING RETURNING code
                    """, logger: logger)
                var inserted = false
                for try await _ in rows { inserted = true }
                return inserted ? (Invite(code: code, expiresAt: expires), true) : nil  // collision: try another code
            }
            if let outcome { return outcome }
        }
        throw Problem(status: 503, code: "invite_code_unavailable", title: "Try again", detail: "No free invite code was found; retry.")
    }

    /// Pairs the caller with the code's owner; `pairing.established` tells both.
    func join(userID: UUID, code: String) async throws -> Partnership {
        let now = clock.now()
        let pairingID = UUID.v7(at: now)
        let partnerID: UUID = try await client.transaction(logger: logger) { connection in
            // Lock order everywhere: user rows (sorted), then invite rows. Two crossing joins therefore queue
            // instead of deadlocking, and nobody can end up in two pairings.
            guard let owner = try await inviteOwner(code, on: connection) else { throw JoinFailure.unknown }
            if owner == userID { throw JoinFailure.ownCode }
            try await lockUsers([owner, userID], on: connection)
            let rows = try await connection.query("""
                SELECT user_id, expires_at, used_at FROM identity.pairing_invites WHERE code = \(code) FOR UPDATE
                """, logger: logger)
            var found: (UUID, Date, Date?)?
            for try await row in rows.decode((UUID, Date, Date?).self) { found = row }
            guard let (lockedOwner, expiresAt, usedAt) = found, lockedOwner == owner else { throw JoinFailure.unknown }
            if usedAt != nil { throw JoinFailure.used }
            if try await partnerRow(of: userID, on: connection) != nil { throw JoinFailure.alreadyPaired }
            // Pairing expires the owner's codes; say why rather than "older than 24 hours".
            if try await partnerRow(of: owner, on: connection) != nil { throw JoinFailure.partnerAlreadyPaired }
            if expiresAt <= now { throw JoinFailure.expired }
            try await connection.query("UPDATE identity.pairing_invites SET used_at = \(now), used_by = \(userID) WHERE code = \(code)", logger: logger)
            // Every other live code of either partner dies with the pairing.
            try await connection.query("""
                UPDATE identity.pairing_invites SET expires_at = \(now)
                WHERE user_id IN (\(owner), \(userID)) AND used_at IS NULL AND expires_at > \(now)
                """, logger: logger)
            try await connection.query("""
                INSERT INTO identity.partners (user_id, partner_id, pairing_id, since)
                VALUES (\(userID), \(owner), \(pairingID), \(now)), (\(owner), \(userID), \(pairingID), \(now))
                """, logger: logger)
            let partners = [owner.lowercased, userID.lowercased]
            try await outbox.enqueue(IdentityEvents.PairingEstablished(pairingId: pairingID.lowercased, app: .pairly,
                                                                             userIds: partners, invitedBy: owner.lowercased),
                                           subject: userID.lowercased, at: now, on: connection, logger: logger)
            try await outbox.enqueue(PairlyFrames.paired(pairingId: pairingID.lowercased, userIds: partners), at: now, on: connection, logger: logger)
            let names = try await displayNames(of: [owner, userID], on: connection)
            try await outbox.enqueue([PairlyPush.paired(recipient: owner, partnerName: names[userID], pairingID: pairingID),
                                            PairlyPush.paired(recipient: userID, partnerName: names[owner], pairingID: pairingID)],
                                           at: now, on: connection, logger: logger)
            return owner
        }
        outbox.committed()
        guard let partnership = try await partnership(of: userID), partnership.partnerId == partnerID.lowercased else {
            throw JoinFailure.unknown
        }
        return partnership
    }

    func partnership(of userID: UUID) async throws -> Partnership? {
        let rows = try await client.query("""
            SELECT p.pairing_id, p.partner_id, u.display_name, p.since
            FROM identity.partners p JOIN identity.users u ON u.id = p.partner_id WHERE p.user_id = \(userID)
            """, logger: logger)
        for try await (pairing, partner, name, since) in rows.decode((UUID, UUID, String?, Date).self) {
            return Partnership(pairingId: pairing.lowercased, partnerId: partner.lowercased, partnerName: name, since: since)
        }
        return nil
    }

    /// Ends the caller's pairing; `pairing.dissolved` tells both partners (and media erases their moments).
    func dissolve(userID: UUID, reason: String) async throws -> Bool {
        let now = clock.now()
        let dissolved: Bool = try await client.transaction(logger: logger) { connection in
            try await dissolve(userID: userID, reason: reason, now: now, on: connection)
        }
        if dissolved { outbox.committed() }
        return dissolved
    }

    /// Inside a transaction: removes both rows of the user's pairing and enqueues `pairing.dissolved`.
    func dissolve(userID: UUID, reason: String, now: Date, on connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.query("""
            DELETE FROM identity.partners WHERE user_id = \(userID) OR partner_id = \(userID) RETURNING user_id, partner_id, pairing_id
            """, logger: logger)
        var pair: (UUID, UUID, UUID)?
        for try await row in rows.decode((UUID, UUID, UUID).self) { pair = row }
        guard let (a, b, pairingID) = pair else { return false }
        let partners = [a.lowercased, b.lowercased].sorted()
        try await outbox.enqueue(IdentityEvents.PairingDissolved(pairingId: pairingID.lowercased, app: .pairly,
                                                                       userIds: partners, endedBy: userID.lowercased, reason: reason),
                                       subject: userID.lowercased, at: now, on: connection, logger: logger)
        try await outbox.enqueue(PairlyFrames.pairDisconnected(pairingId: pairingID.lowercased, userIds: partners, reason: reason),
                                       at: now, on: connection, logger: logger)
        // The partner who did not end it is told by push; the one who did is looking at the app.
        let other = a == userID ? b : a
        let names = try await displayNames(of: [userID], on: connection)
        try await outbox.enqueue([PairlyPush.disconnected(recipient: other, partnerName: names[userID], pairingID: pairingID)]
                                     + [a, b].map { PairlyPush.pairingEnded(recipient: $0, pairingID: pairingID, reason: reason) },
                                 at: now, on: connection, logger: logger)
        return true
    }

    private func displayNames(of ids: [UUID], on connection: PostgresConnection) async throws -> [UUID: String] {
        let rows = try await connection.query("SELECT id, display_name FROM identity.users WHERE id = ANY(\(ids))", logger: logger)
        var names: [UUID: String] = [:]
        for try await (id, name) in rows.decode((UUID, String?).self) { names[id] = name }
        return names
    }

    private func inviteOwner(_ code: String, on connection: PostgresConnection) async throws -> UUID? {
        let rows = try await connection.query("SELECT user_id FROM identity.pairing_invites WHERE code = \(code)", logger: logger)
        for try await id in rows.decode(UUID.self) { return id }
        return nil
    }

    /// Locks user rows in id order; a user that no longer exists (token of a deleted account) is an error.
    private func lockUsers(_ ids: [UUID], on connection: PostgresConnection) async throws {
        for id in ids.sorted(by: { $0.uuidString < $1.uuidString }) {
            let rows = try await connection.query("SELECT id FROM identity.users WHERE id = \(id) FOR UPDATE", logger: logger)
            var exists = false
            for try await _ in rows { exists = true }
            if !exists { throw JoinFailure.accountDeleted }
        }
    }

    private func partnerRow(of userID: UUID, on connection: PostgresConnection) async throws -> UUID? {
        let rows = try await connection.query("SELECT partner_id FROM identity.partners WHERE user_id = \(userID)", logger: logger)
        for try await id in rows.decode(UUID.self) { return id }
        return nil
    }
}


