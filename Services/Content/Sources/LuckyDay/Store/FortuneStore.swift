import ContentKit
import Crypto
import Foundation
import LanternCore
import LanternDatabase
import LanternEvents
import Logging
import PostgresNIO

/// Revealed fortunes (`content.fortunes`) and the one made ahead (`content.next_fortunes`). Revealing a fortune,
/// its event, the next reminder and the request for the next fortune commit together.
struct FortuneStore: Sendable {
    let client: PostgresClient
    let outbox: Outbox
    let profiles: ProfileStore
    let schedule: ScheduleStore
    let logger: Logger

    /// The user's latest fortune and the `Idempotency-Key` it was revealed with.
    func latest(of user: UUID, on connection: PostgresConnection? = nil) async throws -> (Fortune, key: String?)? {
        let query: PostgresQuery = """
            SELECT id, text, artisanal, revealed_at, opens_again_at, idempotency_key FROM content.fortunes
            WHERE user_id = \(user) ORDER BY revealed_at DESC LIMIT 1
            """
        let rows: PostgresRowSequence
        if let connection { rows = try await connection.query(query, logger: logger) } else { rows = try await client.query(query, logger: logger) }
        for try await (id, text, artisanal, revealed, opens, key) in rows.decode((UUID, String, Bool, Date, Date, String?).self) {
            return (Fortune(id: id, text: text, artisanal: artisanal, revealedAt: revealed, opensAgainAt: opens), key)
        }
        return nil
    }

    /// The profile, the pool position, the latest fortune and the one made ahead, in one round trip.
    func breakContext(of user: UUID) async throws -> BreakContext? {
        let rows = try await client.query("""
            SELECT \(unescaped: ProfileStore.columns(of: "p")), p.artisanal_used,
                   f.id, f.text, f.artisanal, f.revealed_at, f.opens_again_at, f.idempotency_key,
                   n.text, n.artisanal, n.source, n.pool_position, n.profile_version, n.for_date::text
            FROM content.luckyday_profiles p
            LEFT JOIN LATERAL (SELECT * FROM content.fortunes WHERE user_id = p.user_id ORDER BY revealed_at DESC LIMIT 1) f ON true
            LEFT JOIN content.next_fortunes n ON n.user_id = p.user_id
            WHERE p.user_id = \(user)
            """, logger: logger)
        for try await row in rows {
            let profile = try ProfileStore.decode(row)
            var cells = row.makeIterator()
            for _ in 0..<15 { _ = cells.next() }  // the profile's columns, decoded above
            func next<T: PostgresDecodable>(_ type: T.Type) throws -> T {
                guard let cell = cells.next() else { throw StoreInconsistency("the break context has fewer columns than expected") }
                return try cell.decode(T.self)
            }
            let used = try next(Int.self)
            let (id, text, artisanal, revealed, opens, key) = (try next(UUID?.self), try next(String?.self), try next(Bool?.self),
                                                              try next(Date?.self), try next(Date?.self), try next(String?.self))
            var context = BreakContext(profile: profile, artisanalUsed: used, latest: nil, next: nil)
            if let id, let text, let artisanal, let revealed, let opens {
                context.latest = (Fortune(id: id, text: text, artisanal: artisanal, revealedAt: revealed, opensAgainAt: opens), key)
            }
            let (nextText, nextArtisanal, source, position, version, day) = (try next(String?.self), try next(Bool?.self), try next(String?.self),
                                                                            try next(Int?.self), try next(Int?.self), try next(String?.self))
            if let nextText, let nextArtisanal, let source, let version, let day = day.flatMap(LocalDay.init) {
                context.next = (WrittenFortune(text: nextText, artisanal: nextArtisanal, source: source, poolPosition: position), version, day)
            }
            return context
        }
        return nil
    }

    /// Breaks the cookie with `fortune` unless, under the user's lock, the cookie turned out to be open already:
    /// one statement takes the lock, one reads what decides, one writes the fortune, every schedule and the event
    /// (`Outbox.prepare`; round trips are what a break costs under load).
    func reveal(_ fortune: WrittenFortune, user: UUID, key: String?, now: Date, timeZone: String?,
                makeNextAt: @Sendable (Date) -> Date, reminderAt: @Sendable (Date, String) -> Date) async throws -> RevealOutcome {
        let hash = Data(SHA256.hash(data: Data(fortune.text.utf8)))
        let result = try await client.transaction(logger: logger) { connection -> RevealOutcome in
            // The lock in a statement of its own: the next statement then reads what a concurrent break committed
            // while this one waited (READ COMMITTED takes a new snapshot per statement).
            try await connection.query("SELECT 1 FROM content.luckyday_profiles WHERE user_id = \(user) FOR UPDATE", logger: logger)
            let rows = try await connection.query("""
                SELECT p.time_zone, f.id, f.text, f.artisanal, f.revealed_at, f.opens_again_at, f.idempotency_key,
                       EXISTS (SELECT 1 FROM content.fortunes WHERE user_id = p.user_id AND idempotency_key = \(key)),
                       EXISTS (SELECT 1 FROM content.fortunes WHERE user_id = p.user_id AND text_hash = \(hash))
                FROM content.luckyday_profiles p
                LEFT JOIN LATERAL (SELECT * FROM content.fortunes WHERE user_id = p.user_id ORDER BY revealed_at DESC LIMIT 1) f ON true
                WHERE p.user_id = \(user)
                """, logger: logger)
            var found: (zone: String, latest: (Fortune, String?)?, keyUsed: Bool, textUsed: Bool)?
            for try await (zone, id, text, artisanal, revealed, opens, latestKey, keyUsed, textUsed)
                in rows.decode((String, UUID?, String?, Bool?, Date?, Date?, String?, Bool, Bool).self) {
                var latest: (Fortune, String?)?
                if let id, let text, let artisanal, let revealed, let opens {
                    latest = (Fortune(id: id, text: text, artisanal: artisanal, revealedAt: revealed, opensAgainAt: opens), latestKey)
                }
                found = (zone, latest, keyUsed, textUsed)
            }
            // The user's lock is held from here: a concurrent break waits, then sees this one's fortune.
            guard let found else { return .noProfile }
            switch DailyCookie.breaking(latest: found.latest?.0, latestKey: found.latest?.1, key: key, now: now) {
            case .repeatAnswer(let earlier): return .repeated(earlier)
            case .locked(let opensAgainAt): return .locked(opensAgainAt: opensAgainAt)
            case .reveal(let revealedAt, let opensAgainAt):
                if found.keyUsed { return .keyReused }
                if found.textUsed { return .duplicateText }
                let revealed = Fortune(id: UUID.v7(at: now), text: fortune.text, artisanal: fortune.artisanal,
                                       revealedAt: revealedAt, opensAgainAt: opensAgainAt)
                let zone = timeZone ?? found.zone
                let counted = fortune.poolPosition == nil ? 0 : 1
                let event = try outbox.prepare(CookieAnnouncements.revealed(revealed, user: user), subject: user.uuidString.lowercased(), at: revealedAt)
                // The fortune, every schedule and the event in one statement.
                try await connection.query("""
                    WITH announced AS (
                        INSERT INTO \(unescaped: outbox.table) (stream, event_id, payload) VALUES (\(event.stream), \(event.eventID), \(event.payload))),
                    revealed AS (
                        INSERT INTO content.fortunes (id, user_id, text, text_hash, artisanal, source, revealed_at, opens_again_at, idempotency_key)
                        VALUES (\(revealed.id), \(user), \(revealed.text), \(hash), \(revealed.artisanal), \(fortune.source), \(revealedAt),
                                \(opensAgainAt), \(key))),
                    profile AS (
                        UPDATE content.luckyday_profiles SET artisanal_used = artisanal_used + \(counted), time_zone = \(zone)
                        WHERE user_id = \(user)),
                    made AS (DELETE FROM content.next_fortunes WHERE user_id = \(user)),
                    ahead AS (
                        INSERT INTO content.pregeneration (user_id, due_at) VALUES (\(user), \(makeNextAt(opensAgainAt)))
                        ON CONFLICT (user_id) DO UPDATE SET due_at = excluded.due_at, leased_until = NULL)
                    INSERT INTO content.reminders (user_id, due_at) VALUES (\(user), \(reminderAt(opensAgainAt, zone)))
                    ON CONFLICT (user_id) DO UPDATE SET due_at = excluded.due_at
                    """, logger: logger)
                return .revealed(revealed)
            }
        }
        if case .revealed = result { outbox.committed() }
        return result
    }
}
