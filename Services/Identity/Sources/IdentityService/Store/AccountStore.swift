import Crypto
import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import LanternService
import LanternTokens
import Logging
import PostgresNIO

/// Accounts, their credentials and profiles. Deleting an account ends its pairing first, in the same transaction.
struct AccountStore: IdentityTables {
    let db: IdentityDatabase
    let pairing: PairingStore
    /// Where a deletion is marked for every service's token check, and for how long (a token's lifetime and leeway).
    let erasures: ErasedAccounts
    let tokenLifetime: Duration

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
                try await outbox.enqueue(IdentityEvents.UserCreated(userId: id.lowercased, app: app, method: method, displayName: displayName),
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

    /// Adds the credential `(account's app, method, subject)` to an existing account (`IdentityLinking`); `linked`
    /// is false when the identity already signed in to it. Throws `LinkFailure`.
    ///
    /// The account's row is locked first, so links to one account (and its deletion) queue. Two accounts racing for
    /// one identity meet at the credentials' primary key: the second insert waits for the first transaction and,
    /// once it commits, inserts nothing; the state is then read again and the loser is told who won. The unique
    /// index `credentials_one_per_provider` keeps an account to one identity per provider the same way.
    func link(userID: UUID, method: String, subject: String, email: String?) async throws -> (User, linked: Bool) {
        let now = clock.now()
        let linked: Bool = try await client.transaction(logger: logger) { connection in
            let rows = try await connection.query("SELECT app FROM identity.users WHERE id = \(userID) FOR UPDATE", logger: logger)
            var found: AppID?
            for try await app in rows.decode(AppID.self) { found = app }
            guard let app = found else { throw LinkFailure.accountDeleted }
            for _ in 0..<3 {
                let state = try await linkState(app: app, method: method, subject: subject, userID: userID, on: connection)
                switch IdentityLinking.decide(account: userID, state) {
                case .refuse(let failure):
                    throw failure
                case .alreadyLinked:
                    if let email {
                        // As a sign-in does: keep the provider's email current.
                        try await connection.query("UPDATE identity.users SET email = \(email) WHERE id = \(userID) AND email IS DISTINCT FROM \(email)",
                                                   logger: logger)
                    }
                    return false
                case .link:
                    let inserted = try await connection.query("""
                        INSERT INTO identity.credentials (app, method, subject, user_id, created_at)
                        VALUES (\(app.rawValue), \(method), \(subject), \(userID), \(now))
                        ON CONFLICT DO NOTHING RETURNING user_id
                        """, logger: logger)
                    var added = false
                    for try await _ in inserted { added = true }
                    if added {
                        try await connection.query("""
                            UPDATE identity.users SET email = coalesce(\(email), email), updated_at = \(now) WHERE id = \(userID)
                            """, logger: logger)
                        return true
                    }
                    // Another request linked the identity (or signed up with it) first: read again who holds what.
                }
            }
            throw Problem(status: 503, code: "sign_in_contention", title: "Try again",
                          detail: "The identity is being linked or signed in to by another request; retry.")
        }
        guard let user = try await user(userID) else { throw LinkFailure.accountDeleted }
        return (user, linked)
    }

    private func linkState(app: AppID, method: String, subject: String, userID: UUID,
                           on connection: PostgresConnection) async throws -> IdentityLinking.State {
        let rows = try await connection.query("""
            SELECT (SELECT user_id FROM identity.credentials WHERE app = \(app.rawValue) AND method = \(method) AND subject = \(subject)),
                   (SELECT subject FROM identity.credentials WHERE user_id = \(userID) AND method = \(method) ORDER BY created_at LIMIT 1)
            """, logger: logger)
        for try await (holder, linkedSubject) in rows.decode((UUID?, String?).self) {
            return IdentityLinking.State(holder: holder, linkedSubject: linkedSubject)
        }
        return IdentityLinking.State()
    }


    func user(_ id: UUID) async throws -> User? {
        for try await user in try await client.execute(ReadUser(id: id), logger: logger) { return user }
        return nil
    }

    /// The profile every `GET /v1/me` reads: prepared once per connection, so PostgreSQL neither parses nor plans it
    /// per request. The sign-in methods come from the user's few credentials by their index (`credentials_user`).
    struct ReadUser: PostgresPreparedStatement {
        static let name = "identity.read_user"
        static let sql = """
            SELECT u.id, u.app, u.display_name, u.email, u.time_zone, u.locale, u.created_at, u.updated_at,
                   ARRAY(SELECT c.method FROM identity.credentials c WHERE c.user_id = u.id ORDER BY c.method)
            FROM identity.users u WHERE u.id = $1
            """
        typealias Row = User
        var id: UUID

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(id)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> User {
            let (id, app, name, email, zone, locale, created, updated, methods) = try row.decode(
                (UUID, String, String?, String?, String?, String?, Date, Date, [String]).self)
            return User(id: id.lowercased, app: app, displayName: name, email: email, timeZone: zone, locale: locale,
                        signInMethods: methods, createdAt: created, updatedAt: updated)
        }
    }

    func updateProfile(_ id: UUID, _ changes: ProfileChanges) async throws -> User? {
        let now = clock.now()
        let renamed: Bool = try await client.transaction(logger: logger) { connection in
            let rows = try await connection.query("SELECT app, display_name FROM identity.users WHERE id = \(id) FOR UPDATE", logger: logger)
            var current: (AppID, String?)?
            for try await row in rows.decode((AppID, String?).self) { current = row }
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
    ///
    /// The account is marked erased first (`ErasedAccounts`), so that from the moment this returns no service takes
    /// its tokens; if the mark cannot be made nothing is deleted (a 503, and the app asks again).
    func deleteUser(_ id: UUID) async throws -> Bool {
        try await erasures.mark(id.lowercased, for: tokenLifetime)
        let now = clock.now()
        let deleted: Bool = try await client.transaction(logger: logger) { connection in
            // The partner must hear that the pairing ended, not only that an account vanished.
            _ = try await pairing.dissolve(userID: id, reason: "account_deleted", now: now, on: connection)
            // An invite of the partner's that this account used keeps its use (a wrong code is still explained
            // as used) but no longer who used it.
            try await connection.query("UPDATE identity.pairing_invites SET used_by = NULL WHERE used_by = \(id)", logger: logger)
            let rows = try await connection.query("DELETE FROM identity.users WHERE id = \(id) RETURNING app", logger: logger)
            var app: AppID?
            for try await a in rows.decode(AppID.self) { app = a }
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
}
