import Crypto
import Foundation
import LanternCore
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

    /// The fortune made ahead, if it was made for this profile version and this local day.
    func next(for user: UUID, profileVersion: Int, day: LocalDay) async throws -> WrittenFortune? {
        let rows = try await client.query("""
            SELECT text, artisanal, source, pool_position FROM content.next_fortunes
            WHERE user_id = \(user) AND profile_version = \(profileVersion) AND for_date = \(day.description)::date
            """, logger: logger)
        for try await (text, artisanal, source, position) in rows.decode((String, Bool, String, Int?).self) {
            return WrittenFortune(text: text, artisanal: artisanal, source: source, poolPosition: position)
        }
        return nil
    }

    /// Breaks the cookie with `fortune` unless, under the user's lock, the cookie turned out to be open already.
    func reveal(_ fortune: WrittenFortune, user: UUID, key: String?, now: Date, timeZone: String?,
                reminderAt: @Sendable (Date, LuckyProfile) -> Date) async throws -> RevealOutcome {
        let hash = Data(SHA256.hash(data: Data(fortune.text.utf8)))
        let result = try await client.transaction(logger: logger) { connection -> RevealOutcome in
            guard let (profile, _) = try await profiles.locked(user, on: connection) else { return .noProfile }
            let latest = try await latest(of: user, on: connection)
            switch DailyCookie.breaking(latest: latest?.0, latestKey: latest?.key, key: key, now: now) {
            case .repeatAnswer(let earlier): return .repeated(earlier)
            case .locked(let opensAgainAt): return .locked(opensAgainAt: opensAgainAt)
            case .reveal(let revealedAt, let opensAgainAt):
                if let key {
                    var used = false
                    for try await _ in try await connection.query("""
                        SELECT 1 FROM content.fortunes WHERE user_id = \(user) AND idempotency_key = \(key)
                        """, logger: logger) { used = true }
                    if used { return .keyReused }
                }
                var seen = false
                for try await _ in try await connection.query("""
                    SELECT 1 FROM content.fortunes WHERE user_id = \(user) AND text_hash = \(hash)
                    """, logger: logger) { seen = true }
                if seen { return .duplicateText }
                let revealed = Fortune(id: UUID.v7(at: now), text: fortune.text, artisanal: fortune.artisanal,
                                       revealedAt: revealedAt, opensAgainAt: opensAgainAt)
                try await connection.query("""
                    INSERT INTO content.fortunes (id, user_id, text, text_hash, artisanal, source, revealed_at, opens_again_at, idempotency_key)
                    VALUES (\(revealed.id), \(user), \(revealed.text), \(hash), \(revealed.artisanal), \(fortune.source), \(revealedAt),
                            \(opensAgainAt), \(key))
                    """, logger: logger)
                if fortune.poolPosition != nil { try await profiles.countArtisanal(user, on: connection) }
                var current = profile
                if let timeZone, timeZone != profile.timeZone {
                    try await profiles.updateTimeZone(timeZone, of: user, on: connection)
                    current.timeZone = timeZone
                }
                try await connection.query("DELETE FROM content.next_fortunes WHERE user_id = \(user)", logger: logger)
                try await schedule.requestPregeneration(for: user, at: now, on: connection)
                try await schedule.scheduleReminder(for: user, at: reminderAt(opensAgainAt, current), on: connection)
                try await outbox.enqueue(CookieAnnouncements.revealed(revealed, user: user), subject: user.uuidString.lowercased(),
                                         at: revealedAt, on: connection, logger: logger)
                return .revealed(revealed)
            }
        }
        if case .revealed = result { outbox.committed() }
        return result
    }
}
