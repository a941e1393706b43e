import Crypto
import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import LanternTokens
import Logging
import PostgresNIO

/// A Lantern account as the apps see it (`GET /v1/me`).
public struct User: Codable, Sendable, Equatable {
    /// Lower-case UUID, as in tokens and events.
    public var id: String
    public var app: String
    public var displayName: String?
    public var email: String?
    public var timeZone: String?
    public var locale: String?
    public var signInMethods: [String]
    public var createdAt: Date
    public var updatedAt: Date
}

public struct Device: Codable, Sendable, Equatable {
    public var deviceId: String
    public var app: String
    public var platform: String
    public var pushToken: String
    public var locale: String?
    public var timeZone: String?
    public var updatedAt: Date
}

/// What the profile update changes; nil leaves a field as it is.
struct ProfileChanges: Sendable {
    var displayName: String?
    var timeZone: String?
    var locale: String?
}

/// The outcome of presenting a refresh token.
enum RefreshOutcome: Sendable {
    case rotated(userID: UUID, sessionID: UUID, app: AppID, refreshToken: String)
    case unknown
    case expired
    case revoked
    /// A spent token came back: someone holds a copy. The session has been revoked.
    case reused
}

/// All SQL of the `identity` schema. Every state change that others must hear of writes its event to the outbox
/// in the same transaction.
struct IdentityStore: Sendable {
    static let schema = "identity"
    let client: PostgresClient
    let outbox: Outbox
    let clock: WallClock
    let refreshLifetime: TimeInterval
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

    // MARK: Sign-in

    /// Finds the account for a credential or creates it (with `user.created`). Safe under concurrent first sign-ins.
    func findOrCreateUser(app: AppID, method: String, subject: String, displayName: String?, email: String?) async throws -> (User, created: Bool) {
        for _ in 0..<3 {
            if let id = try await userID(app: app, method: method, subject: subject) {
                if let email {
                    // Keep the provider's email current (the user may have changed it with Google or Apple).
                    try await client.query("UPDATE identity.users SET email = \(email) WHERE id = \(id) AND email IS DISTINCT FROM \(email)", logger: logger)
                }
                guard let user = try await user(id) else { continue }
                return (user, false)
            }
            let now = clock.now()
            let id = UUID.v7(at: now)
            let created: Bool = try await client.transaction(logger: logger) { connection in
                try await connection.query("""
                    INSERT INTO identity.users (id, app, display_name, email, created_at, updated_at)
                    VALUES (\(id), \(app.rawValue), \(displayName), \(email), \(now), \(now))
                    """, logger: logger)
                let rows = try await connection.query("""
                    INSERT INTO identity.credentials (app, method, subject, user_id, created_at)
                    VALUES (\(app.rawValue), \(method), \(subject), \(id), \(now))
                    ON CONFLICT DO NOTHING RETURNING user_id
                    """, logger: logger)
                var inserted = false
                for try await _ in rows { inserted = true }
                guard inserted else {
                    // Another request created this account first: undo ours, use theirs.
                    try await connection.query("DELETE FROM identity.users WHERE id = \(id)", logger: logger)
                    return false
                }
                try await outbox.enqueue(IdentityEvents.UserCreated(userId: id.lowercased, app: app.rawValue, method: method, displayName: displayName),
                                         subject: id.lowercased, at: now, on: connection, logger: logger)
                return true
            }
            if created {
                outbox.committed()
                guard let user = try await user(id) else { break }
                return (user, true)
            }
        }
        throw Problem(status: 503, code: "sign_in_contention", title: "Try again", detail: "The account is being created by another request; retry.")
    }

    private func userID(app: AppID, method: String, subject: String) async throws -> UUID? {
        let rows = try await client.query("""
            SELECT user_id FROM identity.credentials WHERE app = \(app.rawValue) AND method = \(method) AND subject = \(subject)
            """, logger: logger)
        for try await id in rows.decode(UUID.self) { return id }
        return nil
    }

    // MARK: Sessions and refresh tokens

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
        return try await client.transaction(logger: logger) { connection in
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
                logger.warning("refresh token reused; session revoked", metadata: ["session": "\(sessionID)", "user": "\(userID)"])
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
    }

    func revokeSession(_ sessionID: UUID, userID: UUID, reason: String) async throws {
        try await client.query("""
            UPDATE identity.sessions SET revoked_at = \(clock.now()), revoked_reason = \(reason)
            WHERE id = \(sessionID) AND user_id = \(userID) AND revoked_at IS NULL
            """, logger: logger)
    }

    // MARK: Profile

    func user(_ id: UUID) async throws -> User? {
        let rows = try await client.query("""
            SELECT u.id, u.app, u.display_name, u.email, u.time_zone, u.locale, u.created_at, u.updated_at,
                   coalesce(array_agg(c.method ORDER BY c.method) FILTER (WHERE c.method IS NOT NULL), '{}')
            FROM identity.users u LEFT JOIN identity.credentials c ON c.user_id = u.id
            WHERE u.id = \(id) GROUP BY u.id
            """, logger: logger)
        for try await (id, app, name, email, zone, locale, created, updated, methods) in rows.decode((UUID, String, String?, String?, String?, String?, Date, Date, [String]).self) {
            return User(id: id.lowercased, app: app, displayName: name, email: email, timeZone: zone, locale: locale,
                        signInMethods: methods, createdAt: created, updatedAt: updated)
        }
        return nil
    }

    func updateProfile(_ id: UUID, _ changes: ProfileChanges) async throws -> User? {
        let now = clock.now()
        let renamed: Bool = try await client.transaction(logger: logger) { connection in
            let rows = try await connection.query("SELECT app, display_name FROM identity.users WHERE id = \(id) FOR UPDATE", logger: logger)
            var current: (String, String?)?
            for try await row in rows.decode((String, String?).self) { current = row }
            guard let (app, oldName) = current else { return false }
            try await connection.query("""
                UPDATE identity.users SET
                    display_name = coalesce(\(changes.displayName), display_name),
                    time_zone = coalesce(\(changes.timeZone), time_zone),
                    locale = coalesce(\(changes.locale), locale),
                    updated_at = \(now)
                WHERE id = \(id)
                """, logger: logger)
            guard let newName = changes.displayName, newName != oldName else { return false }
            var partner: UUID?
            for try await p in try await connection.query("SELECT partner_id FROM identity.partners WHERE user_id = \(id)", logger: logger).decode(UUID.self) {
                partner = p
            }
            try await outbox.enqueue(IdentityEvents.ProfileRenamed(userId: id.lowercased, app: app, displayName: newName,
                                                                   partnerId: partner?.lowercased),
                                     subject: id.lowercased, at: now, on: connection, logger: logger)
            if let partner {
                try await outbox.enqueue([PairlyFrames.partnerUpdated(to: partner.lowercased, partnerId: id.lowercased, displayName: newName)],
                                         at: now, on: connection, logger: logger)
            }
            return true
        }
        if renamed { outbox.committed() }
        return try await user(id)
    }

    /// Deletes the account and everything identity keeps of it; `user.deleted` tells every other service.
    func deleteUser(_ id: UUID) async throws -> Bool {
        let now = clock.now()
        let deleted: Bool = try await client.transaction(logger: logger) { connection in
            // The partner must hear that the pairing ended, not only that an account vanished.
            _ = try await PairingStore(store: self).dissolve(userID: id, reason: "account_deleted", now: now, on: connection)
            let rows = try await connection.query("DELETE FROM identity.users WHERE id = \(id) RETURNING app", logger: logger)
            var app: String?
            for try await a in rows.decode(String.self) { app = a }
            guard let app else { return false }
            try await outbox.enqueue(IdentityEvents.UserDeleted(userId: id.lowercased, app: app),
                                     subject: id.lowercased, at: now, on: connection, logger: logger)
            // Its sockets must not outlive the account.
            try await outbox.enqueue(RealtimeDisconnect(userIds: [id.lowercased], reason: "account_deleted"), subject: id.lowercased,
                                     at: now, on: connection, logger: logger)
            return true
        }
        if deleted { outbox.committed() }
        return deleted
    }

    // MARK: Devices

    /// Registers or updates a device's push token. A push token moves with the phone: if another account of the
    /// same app held it (sign-out, new account), that registration is removed so pushes reach the right person.
    func upsertDevice(userID: UUID, app: AppID, device: Device) async throws -> (Device, created: Bool) {
        let now = clock.now()
        let created: Bool = try await client.transaction(logger: logger) { connection in
            let stale = try await connection.query("""
                DELETE FROM identity.devices WHERE app = \(app.rawValue) AND push_token = \(device.pushToken)
                AND NOT (user_id = \(userID) AND device_id = \(device.deviceId)) RETURNING user_id, device_id
                """, logger: logger)
            var removed: [(UUID, String)] = []
            for try await row in stale.decode((UUID, String).self) { removed.append(row) }
            for (otherUser, otherDevice) in removed {
                try await outbox.enqueue(IdentityEvents.DeviceRemoved(userId: otherUser.lowercased, app: app.rawValue, deviceId: otherDevice),
                                         subject: otherUser.lowercased, at: now, on: connection, logger: logger)
            }
            let rows = try await connection.query("""
                INSERT INTO identity.devices (user_id, device_id, app, platform, push_token, locale, time_zone, updated_at)
                VALUES (\(userID), \(device.deviceId), \(app.rawValue), \(device.platform), \(device.pushToken), \(device.locale), \(device.timeZone), \(now))
                ON CONFLICT (user_id, device_id) DO UPDATE SET platform = excluded.platform, push_token = excluded.push_token,
                    locale = excluded.locale, time_zone = excluded.time_zone, updated_at = excluded.updated_at
                RETURNING (xmax = 0)
                """, logger: logger)
            var inserted = false
            for try await flag in rows.decode(Bool.self) { inserted = flag }
            try await outbox.enqueue(IdentityEvents.DeviceRegistered(userId: userID.lowercased, app: app.rawValue, deviceId: device.deviceId,
                                                                     platform: device.platform, pushToken: device.pushToken,
                                                                     locale: device.locale, timeZone: device.timeZone),
                                     subject: userID.lowercased, at: now, on: connection, logger: logger)
            return inserted
        }
        outbox.committed()
        var stored = device
        stored.app = app.rawValue
        stored.updatedAt = now
        return (stored, created)
    }

    func removeDevice(userID: UUID, deviceID: String) async throws -> Bool {
        let now = clock.now()
        let removed: Bool = try await client.transaction(logger: logger) { connection in
            let rows = try await connection.query("""
                DELETE FROM identity.devices WHERE user_id = \(userID) AND device_id = \(deviceID) RETURNING app
                """, logger: logger)
            var app: String?
            for try await a in rows.decode(String.self) { app = a }
            guard let app else { return false }
            try await outbox.enqueue(IdentityEvents.DeviceRemoved(userId: userID.lowercased, app: app, deviceId: deviceID),
                                     subject: userID.lowercased, at: now, on: connection, logger: logger)
            return true
        }
        if removed { outbox.committed() }
        return removed
    }

    // MARK: Signing key

    /// The persisted signing seed, created once (under a lock, so concurrent first starts agree on one key).
    func loadOrCreateSigningSeed() async throws -> Data {
        try await client.transaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext('lantern.identity.signing_key'))", logger: logger)
            let rows = try await connection.query("SELECT seed FROM identity.signing_keys ORDER BY created_at DESC LIMIT 1", logger: logger)
            for try await seed in rows.decode(ByteBuffer.self) { return Data(buffer: seed) }
            let seed = Curve25519.Signing.PrivateKey().rawRepresentation
            try await connection.query("""
                INSERT INTO identity.signing_keys (kid, seed, created_at) VALUES (\(UUID().lowercased), \(ByteBuffer(bytes: seed)), \(clock.now()))
                """, logger: logger)
            logger.notice("generated an access-token signing key (set IDENTITY_SIGNING_KEY to manage it yourself)")
            return seed
        }
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
