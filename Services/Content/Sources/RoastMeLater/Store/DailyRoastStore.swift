import ContentKit
import Foundation
import LanternCore
import LanternDatabase
import Logging
import PostgresNIO

/// The widget's tables: settings and schedule (`content.roast_widgets`), the roasts of the day
/// (`content.roasts_of_the_day`) and the streak copy (`content.roast_streaks`). The widget path is one query.
struct DailyRoastStore: DailyRoastRecords {
    let client: PostgresClient
    let logger: Logger

    /// Roasts of the day older than this many days are dropped as new ones are made.
    static let keptDays = 7

    func widgetState(of user: UUID, at now: Date) async throws -> WidgetState {
        let rows = try await client.execute(ReadWidget(user: user, utcDay: LocalDay(now, in: .gmt).description), logger: logger)
        var state = WidgetState(settings: nil, lastViewed: nil, roasts: [], streak: nil)
        for try await row in rows {
            let (categories, maxSpice, language, zone, lastViewed, id, day, category, spice, roastLanguage, text, artisanal, source, created,
                 current, longest, lastActive) = row
            if let categories, let maxSpice, let language = language.flatMap(RoastLanguage.init(rawValue:)), let zone {
                state.settings = WidgetSettings(categories: categories, maxSpice: maxSpice, language: language, timeZone: zone)
                state.lastViewed = lastViewed.flatMap(LocalDay.init)
            }
            if let id, let day = day.flatMap(LocalDay.init), let category, let spice, let language = roastLanguage.flatMap(RoastLanguage.init(rawValue:)),
               let text, let artisanal, let source, let created {
                state.roasts.append(DailyRoast(id: id, userID: user, day: day, category: category, spice: spice, language: language, text: text,
                                               artisanal: artisanal, source: source, createdAt: created))
            }
            if let current, let longest {
                state.streak = StreakCopy(current: current, longest: longest, lastActiveDay: lastActive.flatMap(LocalDay.init))
            }
        }
        return state
    }

    func save(_ settings: WidgetSettings, user: UUID, today: LocalDay, at now: Date) async throws {
        try await client.transaction(admitting: user, schema: ContentSchema.name, logger: logger) { connection in
            // Inserted, or changed: the days' roasts from today on were made for other settings.
            let changed = try await connection.query("""
                INSERT INTO content.roast_widgets (user_id, categories, max_spice, language, time_zone, updated_at, next_day, due_at, last_viewed_day)
                VALUES (\(user), \(settings.categories), \(settings.maxSpice), \(settings.language.rawValue), \(settings.timeZone), \(now),
                        \(today.description)::date, \(now), \(today.description)::date)
                ON CONFLICT (user_id) DO UPDATE SET categories = excluded.categories, max_spice = excluded.max_spice,
                    language = excluded.language, time_zone = excluded.time_zone, updated_at = excluded.updated_at,
                    next_day = excluded.next_day, due_at = excluded.due_at, leased_until = NULL, last_viewed_day = excluded.last_viewed_day
                WHERE (roast_widgets.categories, roast_widgets.max_spice, roast_widgets.language, roast_widgets.time_zone)
                      IS DISTINCT FROM (excluded.categories, excluded.max_spice, excluded.language, excluded.time_zone)
                RETURNING user_id
                """, logger: logger)
            var isChanged = false
            for try await _ in changed { isChanged = true }
            guard isChanged else { return }
            try await connection.query("""
                DELETE FROM content.roasts_of_the_day WHERE user_id = \(user) AND local_date >= \(today.description)::date - 1
                """, logger: logger)
        }
    }

    func leaseDue(now: Date, leaseUntil: Date, limit: Int) async throws -> [DueWidget] {
        let rows = try await client.query("""
            UPDATE content.roast_widgets SET leased_until = \(leaseUntil)
            WHERE user_id = ANY(ARRAY(SELECT user_id FROM content.roast_widgets
                                      WHERE due_at <= \(now) AND (leased_until IS NULL OR leased_until < \(now))
                                      ORDER BY due_at LIMIT \(limit) FOR UPDATE SKIP LOCKED))
            RETURNING user_id, categories, max_spice, language, time_zone, next_day::text, last_viewed_day::text
            """, logger: logger)
        var due: [DueWidget] = []
        for try await (user, categories, maxSpice, language, zone, day, lastViewed) in rows.decode((UUID, [String], Int, String, String, String, String).self) {
            guard let language = RoastLanguage(rawValue: language), let day = LocalDay(day), let lastViewed = LocalDay(lastViewed) else {
                throw StoreInconsistency("content.roast_widgets \(user): language '\(language)', day '\(day)'")
            }
            due.append(DueWidget(user: user, settings: WidgetSettings(categories: categories, maxSpice: maxSpice, language: language, timeZone: zone),
                                 day: day, lastViewed: lastViewed))
        }
        return due
    }

    /// The widget's read, prepared once per connection (parsed and planned once, not on every widget refresh): the
    /// settings, the roasts of the days around today in UTC (the user's today is one of them), the streak copy.
    struct ReadWidget: PostgresPreparedStatement {
        /// Its name on each connection, spelled out: postgres-nio's default reflects the type's name on every call.
        static let name = "roastmelater.read_widget"
        static let sql = """
            SELECT w.categories, w.max_spice, w.language, w.time_zone, w.last_viewed_day::text,
                   d.id, d.local_date::text, d.category, d.spice, d.language, d.text, d.artisanal, d.source, d.created_at,
                   s.current, s.longest, s.last_active_day::text
            FROM (SELECT $1::uuid AS user_id) u
            LEFT JOIN content.roast_widgets w ON w.user_id = u.user_id
            LEFT JOIN content.roasts_of_the_day d ON d.user_id = u.user_id AND d.local_date BETWEEN $2::date - 1 AND $2::date + 1
            LEFT JOIN content.roast_streaks s ON s.user_id = u.user_id
            """
        static let bindingDataTypes: [PostgresDataType] = [.uuid, .text]
        typealias Row = ([String]?, Int?, String?, String?, String?, UUID?, String?, String?, Int?, String?, String?, Bool?, String?, Date?,
                         Int?, Int?, String?)
        var user: UUID
        var utcDay: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(user)
            bindings.append(utcDay)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    func viewed(_ user: UUID, on day: LocalDay, idleSince: LocalDay, at now: Date) async throws {
        try await client.query("""
            UPDATE content.roast_widgets SET last_viewed_day = \(day.description)::date,
                   due_at = CASE WHEN last_viewed_day < \(idleSince.description)::date THEN LEAST(due_at, \(now)) ELSE due_at END
            WHERE user_id = \(user) AND last_viewed_day IS DISTINCT FROM \(day.description)::date
            """, logger: logger)
    }

    func finish(_ user: UUID, roast: DailyRoast?, lease: Date, next: LocalDay, nextDue: Date) async throws {
        try await client.transaction(logger: logger) { connection in
            var held = false
            for try await _ in try await connection.query("""
                UPDATE content.roast_widgets SET next_day = \(next.description)::date, due_at = \(nextDue), leased_until = NULL
                WHERE user_id = \(user) AND leased_until = \(lease) RETURNING user_id
                """, logger: logger) { held = true }
            guard held, let roast else { return }
            try await connection.query("""
                INSERT INTO content.roasts_of_the_day (user_id, local_date, id, category, spice, language, text, artisanal, source, created_at)
                VALUES (\(user), \(roast.day.description)::date, \(roast.id), \(roast.category), \(roast.spice), \(roast.language.rawValue),
                        \(roast.text), \(roast.artisanal), \(roast.source), \(roast.createdAt))
                ON CONFLICT (user_id, local_date) DO NOTHING
                """, logger: logger)
            try await connection.query("""
                DELETE FROM content.roasts_of_the_day WHERE user_id = \(user) AND local_date < \(roast.day.adding(days: -Self.keptDays).description)::date
                """, logger: logger)
        }
    }

    func keep(_ roast: DailyRoast) async throws {
        try await client.query("""
            INSERT INTO content.roasts (id, user_id, category, spice, language, text, artisanal, source, local_date, created_at)
            SELECT \(roast.id), \(roast.userID), \(roast.category), \(roast.spice), \(roast.language.rawValue), \(roast.text), \(roast.artisanal),
                   \(roast.source), \(roast.day.description)::date, \(roast.createdAt)
            WHERE content.admit_user(\(ErasedUsers.hash(roast.userID)))
            ON CONFLICT (id) DO NOTHING
            """, logger: logger)
    }

    func hasReward(_ reward: String, user: UUID) async throws -> Bool {
        for try await _ in try await client.query("SELECT 1 FROM content.roast_rewards WHERE user_id = \(user) AND reward = \(reward)", logger: logger) {
            return true
        }
        return false
    }

    /// content's copy of the user's streak from `streak.changed`, in one statement that is its own idempotency: the
    /// newest `updatedAt` wins (a redelivered or older event changes nothing), and an erased user is not brought back
    /// (the statement admits itself past the erasure fence, `ErasedUsers`).
    func updateStreak(_ user: UUID, current: Int, longest: Int, lastActiveDay: LocalDay?, at date: Date) async throws {
        try await client.query("""
            INSERT INTO content.roast_streaks (user_id, current, longest, last_active_day, updated_at)
            SELECT \(user), \(current), \(longest), \(lastActiveDay?.description)::date, \(date)
            WHERE content.admit_user(\(ErasedUsers.hash(user)))
            ON CONFLICT (user_id) DO UPDATE SET current = excluded.current, longest = excluded.longest,
                last_active_day = excluded.last_active_day, updated_at = excluded.updated_at
            WHERE roast_streaks.updated_at < excluded.updated_at
            """, logger: logger)
    }

    func erase(_ user: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM content.roast_widgets WHERE user_id = \(user)", logger: logger)
        try await connection.query("DELETE FROM content.roasts_of_the_day WHERE user_id = \(user)", logger: logger)
        try await connection.query("DELETE FROM content.roast_streaks WHERE user_id = \(user)", logger: logger)
    }
}
