import ContentKit
import Foundation
import LanternCore
import LanternDatabase
import Logging
import PostgresNIO

/// Lucky Day profiles (`content.luckyday_profiles`): derived descriptors and texts, never birth data.
struct ProfileStore: Sendable {
    let client: PostgresClient
    let logger: Logger

    static let columns = columns(of: "content.luckyday_profiles")

    /// The columns `decode` reads, in its order, of the table or alias `table`.
    static func columns(of table: String) -> String {
        ["user_id", "version", "time_zone", "birth_time_known", "zodiac_animal", "year_element", "day_master", "pillars::text",
         "elements::text", "nickname", "essence", "texts_artisanal", "limitations", "created_at", "updated_at"]
            .map { "\(table).\($0)" }.joined(separator: ", ")
    }

    func profile(of user: UUID) async throws -> LuckyProfile? {
        let rows = try await client.query("SELECT \(unescaped: Self.columns) FROM content.luckyday_profiles WHERE user_id = \(user)", logger: logger)
        for try await row in rows { return try Self.decode(row) }
        return nil
    }

    static func decode(_ row: PostgresRow) throws -> LuckyProfile {
        let (user, version, zone, timeKnown, animal, yearElement, dayMaster, pillars, elements, nickname, essence, artisanal, limitations, created, updated) =
            try row.decode((UUID, Int, String, Bool, String, String, String, String, String, String, [String], Bool, [String], Date, Date).self)
        return LuckyProfile(
            userID: user, version: version, timeZone: zone, birthTimeKnown: timeKnown, zodiacAnimal: animal, yearElement: yearElement,
            dayMaster: dayMaster, pillars: try JSONDecoder().decode([LuckyProfile.Pillar].self, from: Data(pillars.utf8)),
            elements: try JSONDecoder().decode([String: Int].self, from: Data(elements.utf8)), nickname: nickname, essence: essence,
            textsArtisanal: artisanal, limitations: limitations, createdAt: created, updatedAt: updated)
    }

    /// Creates or replaces the profile (its version goes up), drops a fortune made for the old one and asks for a
    /// new one, in one transaction. Returns the stored profile.
    func save(_ profile: LuckyProfile, schedule: ScheduleStore) async throws -> LuckyProfile {
        let pillars = String(decoding: try JSONEncoder().encode(profile.pillars), as: UTF8.self)
        let elements = String(decoding: try JSONEncoder().encode(profile.elements), as: UTF8.self)
        let saved = try await client.transaction(admitting: profile.userID, schema: ContentSchema.name, logger: logger) { connection -> LuckyProfile in
            let rows = try await connection.query("""
                INSERT INTO content.luckyday_profiles AS p (user_id, version, time_zone, birth_time_known, zodiac_animal, year_element, day_master,
                    pillars, elements, nickname, essence, texts_artisanal, limitations, created_at, updated_at)
                VALUES (\(profile.userID), 1, \(profile.timeZone), \(profile.birthTimeKnown), \(profile.zodiacAnimal), \(profile.yearElement),
                    \(profile.dayMaster), \(pillars)::jsonb, \(elements)::jsonb, \(profile.nickname), \(profile.essence), \(profile.textsArtisanal),
                    \(profile.limitations), \(profile.updatedAt), \(profile.updatedAt))
                ON CONFLICT (user_id) DO UPDATE SET version = p.version + 1, time_zone = excluded.time_zone,
                    birth_time_known = excluded.birth_time_known, zodiac_animal = excluded.zodiac_animal, year_element = excluded.year_element,
                    day_master = excluded.day_master, pillars = excluded.pillars, elements = excluded.elements, nickname = excluded.nickname,
                    essence = excluded.essence, texts_artisanal = excluded.texts_artisanal, limitations = excluded.limitations,
                    updated_at = excluded.updated_at
                RETURNING \(unescaped: Self.columns(of: "p"))
                """, logger: logger)
            var stored: LuckyProfile?
            for try await row in rows { stored = try Self.decode(row) }
            guard let stored else { throw StoreInconsistency("the profile upsert returned no row") }
            try await connection.query("DELETE FROM content.next_fortunes WHERE user_id = \(profile.userID)", logger: logger)
            try await schedule.requestPregeneration(for: profile.userID, at: profile.updatedAt, on: connection)
            return stored
        }
        return saved
    }

    /// Everything content keeps about a user (account deletion), inside the caller's transaction.
    ///
    /// Every transaction that touches a user's rows locks the profile row first (a break, a save, a fortune made
    /// ahead), so they queue behind one another instead of deadlocking on the other tables.
    func erase(_ user: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("SELECT 1 FROM content.luckyday_profiles WHERE user_id = \(user) FOR UPDATE", logger: logger)
        for table in ["pregeneration", "next_fortunes", "reminders", "fortunes", "luckyday_profiles"] {
            try await connection.query("DELETE FROM content.\(unescaped: table) WHERE user_id = \(user)", logger: logger)
        }
    }
}

