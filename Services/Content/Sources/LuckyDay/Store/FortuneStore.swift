import ContentKit
import Crypto
import Foundation
import LanternCore
import LanternDatabase
import LanternEvents
import Logging
import PostgresNIO

/// Revealed fortunes (`content.fortunes`) and the one made ahead (`content.next_fortunes`). The profile row names
/// the latest fortune (`latest_fortune_id`): a break reads through it and writes guarded on it.
struct FortuneStore: Sendable {
    let client: PostgresClient
    let outbox: Outbox
    let profiles: ProfileStore
    let schedule: ScheduleStore
    let logger: Logger

    /// The user's latest fortune and the `Idempotency-Key` it was revealed with.
    func latest(of user: UUID) async throws -> (Fortune, key: String?)? {
        let rows = try await client.query("""
            SELECT f.id, f.text, f.artisanal, f.revealed_at, f.opens_again_at, f.idempotency_key
            FROM content.luckyday_profiles p JOIN content.fortunes f ON f.id = p.latest_fortune_id
            WHERE p.user_id = \(user)
            """, logger: logger)
        for try await (id, text, artisanal, revealed, opens, key) in rows.decode((UUID, String, Bool, Date, Date, String?).self) {
            return (Fortune(id: id, text: text, artisanal: artisanal, revealedAt: revealed, opensAgainAt: opens), key)
        }
        return nil
    }

    /// What a break decides on, in one round trip: the profile row's version, zone and pool position, the latest
    /// fortune and the one made ahead.
    func breakContext(of user: UUID) async throws -> BreakContext? {
        let rows = try await client.query("""
            SELECT p.version, p.time_zone, p.artisanal_used,
                   f.id, f.text, f.artisanal, f.revealed_at, f.opens_again_at, f.idempotency_key,
                   n.text, n.artisanal, n.source, n.pool_position, n.profile_version, n.for_date
            FROM content.luckyday_profiles p
            LEFT JOIN content.fortunes f ON f.id = p.latest_fortune_id
            LEFT JOIN content.next_fortunes n ON n.user_id = p.user_id
            WHERE p.user_id = \(user)
            """, logger: logger)
        for try await (version, zone, used, id, text, artisanal, revealed, opens, key, nextText, nextArtisanal, source, position, nextVersion, day)
            in rows.decode((Int, String, Int, UUID?, String?, Bool?, Date?, Date?, String?, String?, Bool?, String?, Int?, Int?, Date?).self) {
            var context = BreakContext(profileVersion: version, timeZone: zone, artisanalUsed: used, latest: nil, next: nil)
            if let id, let text, let artisanal, let revealed, let opens {
                context.latest = (Fortune(id: id, text: text, artisanal: artisanal, revealedAt: revealed, opensAgainAt: opens), key)
            }
            if let nextText, let nextArtisanal, let source, let nextVersion, let day {
                // A `date` arrives as its midnight in UTC.
                context.next = (WrittenFortune(text: nextText, artisanal: nextArtisanal, source: source, poolPosition: position),
                                nextVersion, LocalDay(day, in: .gmt))
            }
            return context
        }
        return nil
    }

    /// Writes a decided reveal in one statement: the profile row is updated only if it still holds the version and
    /// latest fortune the decision read (a parallel break waits for the row, then finds it changed), and the fortune,
    /// its event, the next pre-generation and the reminder are written only with it. Uniqueness (the same words
    /// twice, a key of an earlier cookie) is checked by the same statement.
    func reveal(_ reveal: Reveal) async throws -> RevealWrite {
        let fortune = reveal.fortune, user = reveal.user
        // The words' digest: the same words are never given to one user twice (`fortunes_text_once`).
        let hash = Data(SHA256.hash(data: Data(fortune.text.utf8)))
        let event = try outbox.prepare(CookieAnnouncements.revealed(fortune, user: user), subject: user.uuidString.lowercased(), at: fortune.revealedAt)
        do {
            let rows = try await client.query("""
                WITH decided AS (
                    UPDATE content.luckyday_profiles SET latest_fortune_id = \(fortune.id), artisanal_used = \(reveal.artisanalUsed),
                        time_zone = \(reveal.timeZone)
                    WHERE user_id = \(user) AND version = \(reveal.expectedVersion)
                      AND latest_fortune_id IS NOT DISTINCT FROM \(reveal.expectedLatest)
                    RETURNING user_id),
                revealed AS (
                    INSERT INTO content.fortunes (id, user_id, text, text_hash, artisanal, source, revealed_at, opens_again_at, idempotency_key)
                    SELECT \(fortune.id), user_id, \(fortune.text), \(hash), \(fortune.artisanal), \(reveal.source),
                           \(fortune.revealedAt), \(fortune.opensAgainAt), \(reveal.key) FROM decided),
                announced AS (
                    INSERT INTO \(unescaped: outbox.table) (stream, event_id, payload)
                    SELECT \(event.stream), \(event.eventID), \(event.payload) FROM decided),
                made AS (DELETE FROM content.next_fortunes n USING decided d WHERE n.user_id = d.user_id),
                ahead AS (
                    INSERT INTO content.pregeneration (user_id, due_at) SELECT user_id, \(reveal.makeNextAt) FROM decided
                    ON CONFLICT (user_id) DO UPDATE SET due_at = excluded.due_at, leased_until = NULL),
                reminded AS (
                    INSERT INTO content.reminders (user_id, due_at) SELECT user_id, \(reveal.remindAt) FROM decided
                    ON CONFLICT (user_id) DO UPDATE SET due_at = excluded.due_at)
                SELECT count(*) FROM decided
                """, logger: logger)
            var written = 0
            for try await count in rows.decode(Int.self) { written = count }
            guard written == 1 else { return .changed }
        } catch {
            switch DatabaseErrors.uniqueViolation(error) {
            case "fortunes_text_once": return .duplicateText
            case "fortunes_key_once": return .keyReused
            default: throw error
            }
        }
        outbox.committed()
        return .revealed
    }
}
