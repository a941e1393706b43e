import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import Logging
import PostgresNIO

/// Counters, the sets behind them and the badges they earn (`counters`, `counter_members`, `badges`), the reads of
/// a user's profile and export, and erasure. A batch of events is one transaction of a fixed number of statements,
/// however many events and users it holds.
struct ActivityStore: ActivityRecords, ProfileRecords {
    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger
    static let consumer = "gamification.activity"

    func apply(_ batch: ActivityBatch, decide: @Sendable ([CounterChange]) -> [BadgeGrant]) async throws -> Int {
        let earned = try await client.transaction(logger: logger) { connection -> Int in
            // Once per event id, and not for a user erased meanwhile (an event still on its way counts for
            // nothing; the erasure fence, `ErasedUsers`, holds each user admitted until the commit): one statement
            // marks the ids processed and answers, of the new ones, those to count.
            let ids = batch.events.map(\.id), hashes = batch.events.map { ErasedUsers.hash($0.user) }
            var counted = Set<UUID>()
            for try await id in try await connection.query("""
                WITH fresh AS (
                    INSERT INTO gamification.processed_events (consumer, event_id) SELECT \(Self.consumer), unnest(\(ids)::uuid[])
                    ON CONFLICT DO NOTHING RETURNING event_id
                )
                SELECT x.id FROM unnest(\(ids)::uuid[], \(hashes)::bytea[]) AS x(id, user_hash)
                WHERE x.id IN (SELECT event_id FROM fresh)
                  AND gamification.admit_user(x.user_hash)
                """, logger: logger).decode(UUID.self) { counted.insert(id) }
            let steps = batch.events.filter { counted.contains($0.id) }.flatMap { batch.steps[$0.id] ?? [] }
            guard !steps.isEmpty else { return 0 }

            // Sets first: a member counts only when it is new.
            let sets = steps.filter { $0.member != nil }
            var added = Set<CounterStep.Key>()
            if !sets.isEmpty {
                let rows = try await connection.query("""
                    INSERT INTO gamification.counter_members (user_id, app, metric, subject, member)
                    SELECT * FROM unnest(\(sets.map(\.user))::uuid[], \(sets.map(\.app.rawValue))::text[], \(sets.map(\.metric))::text[],
                                         \(sets.map(\.subject))::text[], \(sets.map { $0.member ?? "" })::text[])
                    ON CONFLICT DO NOTHING RETURNING user_id, app, metric, subject, member
                    """, logger: logger)
                for try await (user, app, metric, subject, member) in rows.decode((UUID, String, String, String, String).self) {
                    added.insert(CounterStep.Key(user: user, app: app, metric: metric, subject: subject, member: member))
                }
            }
            var deltas: [CounterStep.Key: (delta: Int, size: Int?)] = [:]
            for step in steps {
                // A member counts once: the first step that names it takes it (two events of one batch may).
                if step.member != nil, added.remove(step.key) == nil { continue }
                var key = step.key
                key.member = ""
                let previous = deltas[key]
                deltas[key] = ((previous?.delta ?? 0) + 1, [previous?.size, step.size].compactMap { $0 }.max())
            }
            guard !deltas.isEmpty else { return 0 }
            let keys = Array(deltas.keys)
            let rows = try await connection.query("""
                INSERT INTO gamification.counters AS c (user_id, app, metric, subject, value, size)
                SELECT u, a, m, s, v, nullif(z, 0) FROM unnest(\(keys.map(\.user))::uuid[], \(keys.map(\.app))::text[], \(keys.map(\.metric))::text[],
                                     \(keys.map(\.subject))::text[], \(keys.map { Int64(deltas[$0]?.delta ?? 0) })::bigint[],
                                     \(keys.map { deltas[$0]?.size ?? 0 })::int[]) AS x(u, a, m, s, v, z)
                ON CONFLICT (user_id, app, metric, subject) DO UPDATE
                    SET value = c.value + EXCLUDED.value, size = greatest(c.size, EXCLUDED.size)
                RETURNING user_id, app, metric, subject, value, size
                """, logger: logger)
            var changes: [CounterChange] = []
            for try await (user, app, metric, subject, value, size) in rows.decode((UUID, String, String, String, Int64, Int?).self) {
                guard let appID = AppID(rawValue: app) else { continue }
                let delta = deltas[CounterStep.Key(user: user, app: app, metric: metric, subject: subject, member: "")]?.delta ?? 0
                changes.append(CounterChange(user: user, app: appID, metric: metric, subject: subject, before: Int(value) - delta, after: Int(value), size: size))
            }
            let grants = decide(changes)
            guard !grants.isEmpty else { return 0 }
            // Earned once: only the rows that are new announce themselves. One statement: the badges, and the
            // events of those whose row it inserted (each tagged with its badge's key).
            var streams: [String] = [], eventIDs: [UUID] = [], payloads: [String] = [], tags: [String] = []
            for grant in grants {
                let subject = grant.user.lowercased
                var rows = [try outbox.prepare(grant.event, subject: subject, at: batch.at), try outbox.prepare(grant.frame, subject: subject, at: batch.at)]
                if let push = grant.push { rows.append(try outbox.prepare(push, subject: subject, at: batch.at)) }
                let tag = Self.badgeKey(grant.user, grant.app.rawValue, grant.badge.badge, grant.badge.subject)
                for row in rows { streams.append(row.stream); eventIDs.append(row.eventID); payloads.append(row.payload); tags.append(tag) }
            }
            var new = 0
            for try await count in try await connection.query("""
                WITH b AS (
                    INSERT INTO gamification.badges (user_id, app, badge, subject, earned_at)
                    SELECT * FROM unnest(\(grants.map(\.user))::uuid[], \(grants.map(\.app.rawValue))::text[], \(grants.map(\.badge.badge))::text[],
                                         \(grants.map(\.badge.subject))::text[], \(grants.map(\.badge.earnedAt))::timestamptz[])
                    ON CONFLICT DO NOTHING RETURNING user_id::text || '|' || app || '|' || badge || '|' || subject AS tag
                ), o AS (
                    INSERT INTO \(unescaped: outbox.table) (stream, event_id, payload)
                    SELECT x.stream, x.event_id, x.payload
                    FROM unnest(\(streams)::text[], \(eventIDs)::uuid[], \(payloads)::text[], \(tags)::text[]) WITH ORDINALITY AS x(stream, event_id, payload, tag, n)
                    WHERE x.tag IN (SELECT tag FROM b)
                    ORDER BY x.n
                )
                SELECT count(*)::int FROM b
                """, logger: logger).decode(Int.self) { new = count }
            return new
        }
        if earned > 0 { outbox.committed() }
        return earned
    }

    /// A badge row's key as the batch's statement spells it (PostgreSQL prints a uuid in lower case).
    static func badgeKey(_ user: UUID, _ app: String, _ badge: String, _ subject: String) -> String {
        "\(user.lowercased)|\(app)|\(badge)|\(subject)"
    }

    func profile(of user: UUID, app: AppID) async throws -> ProfileData {
        var data = ProfileData()
        let rows = try await client.execute(ReadProfile(user: user, app: app.rawValue), logger: logger)
        for try await (kind, a, b, number, date, text, flag, current, longest, totalDays, runStart, lastDay, lastInstant, lastZone, previousEnd,
                       previousLength, freezeUsed) in rows {
            switch kind {
            case "s":
                let state = StreakStore.state((current, longest, totalDays, runStart, lastDay, lastInstant, lastZone, previousEnd, previousLength,
                                               freezeUsed))
                data.row = state.map { StreakRow(state: $0, version: number, zone: text ?? "UTC", reminders: flag ?? true, remindAt: date) }
            case "c":
                data.counters.append(ProfileData.Counter(metric: a, subject: b, value: Int(number), size: text.flatMap { Int($0) }))
            case "b":
                data.badges.append(EarnedBadge(badge: a, subject: b, earnedAt: date ?? .distantPast))
            default:
                data.rewards[a] = date ?? .distantPast
            }
        }
        return data
    }

    /// The profile's read: the streak, counters, badges and rewards of a user and app in one statement, prepared once
    /// per connection (parsed and planned on every call, its four branches cost more in PostgreSQL than they read).
    struct ReadProfile: PostgresPreparedStatement {
        static let name = "gamification.read_profile"
        /// The state's columns in the rows that are not the streak's.
        private static let noState = StreakStore.stateColumns.split(separator: ",").map { _ in "NULL" }.joined(separator: ", ")
        static let sql = """
            SELECT 's', '', '', version, remind_at, zone, reminders, \(StreakStore.stateColumns)
                FROM gamification.streaks WHERE user_id = $1 AND app = $2
            UNION ALL SELECT 'c', metric, subject, value, NULL, size::text, NULL, \(noState)
                FROM gamification.counters WHERE user_id = $1 AND app = $2
            UNION ALL SELECT 'b', badge, subject, 0, earned_at, NULL, NULL, \(noState)
                FROM gamification.badges WHERE user_id = $1 AND app = $2
            UNION ALL SELECT 'r', reward, '', 0, unlocked_at, NULL, NULL, \(noState)
                FROM gamification.rewards WHERE user_id = $1 AND app = $2
            """
        typealias Row = (String, String, String, Int64, Date?, String?, Bool?, Int?, Int?, Int?, LocalDay?, LocalDay?, Date?, String?, LocalDay?,
                         Int?, Bool?)
        var user: UUID
        var app: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(user)
            bindings.append(app)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    func export(of user: UUID, app: AppID) async throws -> ExportData {
        let profile = try await profile(of: user, app: app)
        var export = ExportData(profile: profile, checkIns: [], members: [])
        let rows = try await client.query("""
            SELECT 'c', idempotency_key, zone, local_date::text, occurred_at, counted FROM gamification.check_ins WHERE user_id = \(user) AND app = \(app.rawValue)
            UNION ALL SELECT 'm', metric, subject, member, NULL, NULL FROM gamification.counter_members WHERE user_id = \(user) AND app = \(app.rawValue)
            ORDER BY 1, 5, 2, 3, 4
            """, logger: logger)
        for try await (kind, a, b, c, date, counted) in rows.decode((String, String, String, String, Date?, Bool?).self) {
            if kind == "c" {
                export.checkIns.append(.init(key: a, zone: b, localDate: c, occurredAt: date ?? .distantPast, counted: counted ?? false))
            } else {
                export.members.append(.init(metric: a, subject: b, member: c))
            }
        }
        return export
    }

    /// Remembers (by a hash) that the user is gone, past the writes admitted before (`ErasedUsers.record`), then
    /// deletes every row of the user in every table.
    func erase(_ user: UUID, at date: Date, on connection: PostgresConnection) async throws {
        try await ErasedUsers.record(user, at: date, schema: "gamification", on: connection, logger: logger)
        for table in ["streaks", "check_ins", "counters", "counter_members", "badges", "rewards"] {
            try await connection.query("DELETE FROM gamification.\(unescaped: table) WHERE user_id = \(user)", logger: logger)
        }
    }
}

extension CounterStep {
    /// A counter (member "") or a member of its set.
    struct Key: Hashable {
        var user: UUID
        var app: String
        var metric: String
        var subject: String
        var member: String
    }

    var key: Key { Key(user: user, app: app.rawValue, metric: metric, subject: subject, member: member ?? "") }
}
