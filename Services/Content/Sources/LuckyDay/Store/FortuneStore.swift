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
        for try await (version, zone, used, id, text, artisanal, revealed, opens, key, nextText, nextArtisanal, source, position, nextVersion, day)
            in try await client.execute(ReadBreakContext(user: user), logger: logger) {
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

    /// Writes a decided reveal in one statement (`WriteReveal`): the profile row is updated only if it still holds
    /// the version and latest fortune the decision read (a parallel break waits for the row, then finds it changed),
    /// and the fortune, its event, the next pre-generation and the reminder are written only with it. Uniqueness
    /// (the same words twice, a key of an earlier cookie) is checked by the same statement.
    func reveal(_ reveal: Reveal) async throws -> RevealWrite {
        let event = try outbox.prepare(CookieAnnouncements.revealed(reveal.fortune, user: reveal.user), subject: reveal.user.uuidString.lowercased(),
                                       at: reveal.fortune.revealedAt)
        do {
            var written = 0
            for try await count in try await client.execute(WriteReveal(reveal: reveal, event: event), logger: logger) { written = count }
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

    /// The read of every break, prepared once per connection (planned once, not per request).
    ///
    /// Each joined row is a lateral lookup by key, fenced with `OFFSET 0` so that it stays one: a plain join let the
    /// planner, on a connection whose generic plan was made while `fortunes` had never been analyzed (a new
    /// deployment, the benchmark), hash the profile and scan every fortune on every break for the connection's life.
    struct ReadBreakContext: PostgresPreparedStatement {
        /// Its name on each connection, spelled out: postgres-nio's default reflects the type's name on every call.
        static let name = "luckyday.read_break_context"
        static let sql = """
            SELECT p.version, p.time_zone, p.artisanal_used,
                   f.id, f.text, f.artisanal, f.revealed_at, f.opens_again_at, f.idempotency_key,
                   n.text, n.artisanal, n.source, n.pool_position, n.profile_version, n.for_date
            FROM content.luckyday_profiles p
            LEFT JOIN LATERAL (SELECT * FROM content.fortunes WHERE id = p.latest_fortune_id OFFSET 0) f ON true
            LEFT JOIN LATERAL (SELECT * FROM content.next_fortunes WHERE user_id = p.user_id OFFSET 0) n ON true
            WHERE p.user_id = $1
            """
        typealias Row = (Int, String, Int, UUID?, String?, Bool?, Date?, Date?, String?, String?, Bool?, String?, Int?, Int?, Date?)
        var user: UUID

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(user)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// The write of every break, prepared once per connection. Its event goes to `content.outbox` (content's schema,
    /// as its tables'). The types are given: a first break has no latest fortune and may have no key.
    struct WriteReveal: PostgresPreparedStatement {
        static let name = "luckyday.write_reveal"
        static let sql = """
            WITH decided AS (
                UPDATE content.luckyday_profiles SET latest_fortune_id = $2, artisanal_used = $3, time_zone = $4
                WHERE user_id = $1 AND version = $5 AND latest_fortune_id IS NOT DISTINCT FROM $6
                RETURNING user_id),
            revealed AS (
                INSERT INTO content.fortunes (id, user_id, text, text_hash, artisanal, source, revealed_at, opens_again_at, idempotency_key)
                SELECT $2, user_id, $7, $8, $9, $10, $11, $12, $13 FROM decided),
            announced AS (
                INSERT INTO content.outbox (stream, event_id, payload) SELECT $14, $15, $16 FROM decided),
            made AS (DELETE FROM content.next_fortunes WHERE user_id = $1 AND EXISTS (SELECT 1 FROM decided)),
            ahead AS (
                INSERT INTO content.pregeneration (user_id, due_at) SELECT user_id, $17 FROM decided
                ON CONFLICT (user_id) DO UPDATE SET due_at = excluded.due_at, leased_until = NULL),
            reminded AS (
                INSERT INTO content.reminders (user_id, due_at) SELECT user_id, $18 FROM decided
                ON CONFLICT (user_id) DO UPDATE SET due_at = excluded.due_at)
            SELECT count(*) FROM decided
            """
        static let bindingDataTypes: [PostgresDataType] = [.uuid, .uuid, .int8, .text, .int8, .uuid, .text, .bytea, .bool, .text,
                                                           .timestamptz, .timestamptz, .text, .text, .uuid, .text, .timestamptz, .timestamptz]
        typealias Row = Int
        var reveal: Reveal
        var event: Outbox.Row

        func makeBindings() throws -> PostgresBindings {
            let fortune = reveal.fortune
            var bindings = PostgresBindings(capacity: 18)
            bindings.append(reveal.user)
            bindings.append(fortune.id)
            bindings.append(reveal.artisanalUsed)
            bindings.append(reveal.timeZone)
            bindings.append(reveal.expectedVersion)
            bindings.append(reveal.expectedLatest)
            bindings.append(fortune.text)
            // The words' digest: the same words are never given to one user twice (`fortunes_text_once`).
            try bindings.append(Data(SHA256.hash(data: Data(fortune.text.utf8))))
            bindings.append(fortune.artisanal)
            bindings.append(reveal.source)
            bindings.append(fortune.revealedAt)
            bindings.append(fortune.opensAgainAt)
            bindings.append(reveal.key)
            bindings.append(event.stream)
            bindings.append(event.eventID)
            bindings.append(event.payload)
            bindings.append(reveal.makeNextAt)
            bindings.append(reveal.remindAt)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int.self) }
    }
}
