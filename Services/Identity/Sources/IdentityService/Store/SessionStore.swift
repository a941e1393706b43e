import Crypto
import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import LanternTokens
import Logging
import PostgresNIO

/// Sessions and their rotating refresh tokens (only hashes are stored); a spent token presented again revokes
/// its session.
struct SessionStore: IdentityTables {
    let db: IdentityDatabase
    let refreshLifetime: TimeInterval


    func createSession(userID: UUID, app: AppID) async throws -> (sessionID: UUID, refreshToken: String) {
        let now = clock.now()
        let sessionID = UUID.v7(at: now)
        let token = RefreshToken.generate()
        let expires = now.addingTimeInterval(refreshLifetime)
        try await client.transaction(logger: logger) { connection in
            try await connection.query("""
                INSERT INTO identity.sessions (id, user_id, app, created_at, last_seen_at) VALUES (\(sessionID), \(userID), \(app.rawValue), \(now), \(now))
                """, logger: logger)
            try await connection.query("""
                INSERT INTO identity.refresh_tokens (hash, session_id, issued_at, expires_at) VALUES (\(RefreshToken.hash(token)), \(sessionID), \(now), \(expires))
                """, logger: logger)
        }
        return (sessionID, token)
    }

    /// Spends a refresh token and issues the next one; detects reuse of a spent token.
    func rotate(refreshToken: String) async throws -> RefreshOutcome {
        let hash = RefreshToken.hash(refreshToken)
        let now = clock.now()
        let outcome = try await client.transaction(logger: logger) { connection -> RefreshOutcome in
            let rows = try await connection.query("""
                SELECT t.session_id, t.expires_at, t.spent_at, s.revoked_at, s.user_id, s.app
                FROM identity.refresh_tokens t JOIN identity.sessions s ON s.id = t.session_id
                WHERE t.hash = \(hash) FOR UPDATE OF t, s
                """, logger: logger)
            var found: (UUID, Date, Date?, Date?, UUID, String)?
            for try await row in rows.decode((UUID, Date, Date?, Date?, UUID, String).self) { found = row }
            guard let (sessionID, expiresAt, spentAt, revokedAt, userID, appName) = found, let app = AppID(rawValue: appName) else {
                return .unknown
            }
            if revokedAt != nil { return .revoked }
            if spentAt != nil {
                try await connection.query("""
                    UPDATE identity.sessions SET revoked_at = \(now), revoked_reason = 'refresh_token_reused' WHERE id = \(sessionID)
                    """, logger: logger)
                try await endSockets(of: sessionID, user: userID, reason: "refresh_token_reused", at: now, on: connection)
                logger.warning("refresh token reused; session revoked", metadata: ["session": "\(sessionID.lowercased)", "user": "\(userID.lowercased)"])
                return .reused
            }
            if expiresAt < now { return .expired }
            let next = RefreshToken.generate()
            try await connection.query("UPDATE identity.refresh_tokens SET spent_at = \(now) WHERE hash = \(hash)", logger: logger)
            try await connection.query("""
                INSERT INTO identity.refresh_tokens (hash, session_id, issued_at, expires_at)
                VALUES (\(RefreshToken.hash(next)), \(sessionID), \(now), \(now.addingTimeInterval(refreshLifetime)))
                """, logger: logger)
            try await connection.query("UPDATE identity.sessions SET last_seen_at = \(now) WHERE id = \(sessionID)", logger: logger)
            return .rotated(userID: userID, sessionID: sessionID, app: app, refreshToken: next)
        }
        if case .reused = outcome { outbox.committed() }
        return outcome
    }

    /// Ends a session (`reason` is kept in `revoked_reason`, e.g. `logout`) and, in the same transaction, the
    /// sockets opened with its tokens (`realtime.disconnect`).
    func revokeSession(_ sessionID: UUID, userID: UUID, reason: String) async throws {
        let now = clock.now()
        let revoked = try await client.transaction(logger: logger) { connection -> Bool in
            let rows = try await connection.query("""
                UPDATE identity.sessions SET revoked_at = \(now), revoked_reason = \(reason)
                WHERE id = \(sessionID) AND user_id = \(userID) AND revoked_at IS NULL RETURNING id
                """, logger: logger)
            var revoked = false
            for try await _ in rows { revoked = true }
            if revoked { try await endSockets(of: sessionID, user: userID, reason: reason == "logout" ? "logged_out" : reason, at: now, on: connection) }
            return revoked
        }
        if revoked { outbox.committed() }
    }

    /// A session's sockets must not outlive it: every gateway closes those opened with its tokens.
    private func endSockets(of sessionID: UUID, user: UUID, reason: String, at now: Date, on connection: PostgresConnection) async throws {
        try await outbox.enqueue(RealtimeDisconnect(sessionIds: [sessionID.lowercased], reason: reason), subject: user.lowercased,
                                 at: now, on: connection, logger: logger)
    }
}

/// Opaque refresh tokens: 256 random bits, only their SHA-256 is stored.
enum RefreshToken {
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return "lrt_" + Base64URL.encode(bytes)
    }

    static func hash(_ token: String) -> ByteBuffer {
        ByteBuffer(bytes: SHA256.hash(data: Data(token.utf8)))
    }
}
