import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import Logging
import PostgresNIO

/// Streaks (`gamification.streaks`), check-ins by key (`check_ins`), and the badges and rewards a streak earns. A
/// change is one statement: the conditional write of the row, the check-in, the milestones and their events commit
/// together or not at all (`Outbox.prepare`). Each write admits itself past the erasure fence (`ErasedUsers`): one
/// of an erased user writes nothing, and the retry reads `erased`.
struct StreakStore: StreakRecords {
    static let schema = "gamification"

    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger

    static let housekeeping: [Housekeeping.Rule] = [
        // A check-in may be 72 hours late; its key is kept well beyond, then forgotten.
        Housekeeping.Rule("check_ins", sql: "DELETE FROM gamification.check_ins WHERE created_at < $1", keep: 8 * 86_400),
        .processedEvents(schema: schema),
    ]

    func streak(of user: UUID, app: AppID, key: String?) async throws -> (row: StreakRow?, earlier: CheckInResult?, erased: Bool) {
        let rows = try await client.execute(ReadStreak(user: user, app: app.rawValue, key: key ?? "", hash: ErasedUsers.hash(user)), logger: logger)
        for try await (row, result, erased) in rows {
            return (row, try result.map { try Self.decode(CheckInResult.self, $0) }, erased)
        }
        return (nil, nil, false)
    }

    /// `StreakState`'s columns in `streaks`, in the order `state(_:)` reads them.
    static let stateColumns = "current, longest, total_days, run_start, last_day, last_instant, last_zone, previous_end, previous_length, freeze_used"
    typealias StateColumns = (Int?, Int?, Int?, LocalDay?, LocalDay?, Date?, String?, LocalDay?, Int?, Bool?)

    /// The state in `columns`; nil when there is no row (a left join's nulls).
    static func state(_ columns: StateColumns) -> StreakState? {
        guard let current = columns.0 else { return nil }
        var state = StreakState()
        state.current = current
        state.longest = columns.1 ?? 0
        state.totalDays = columns.2 ?? 0
        state.runStart = columns.3
        state.lastDay = columns.4
        state.lastInstant = columns.5
        state.lastZone = columns.6
        state.previousEnd = columns.7
        state.previousLength = columns.8
        state.freezeUsed = columns.9 ?? false
        return state
    }

    func commit(_ change: StreakChange) async throws -> Bool {
        if change.checkInOnly, let checkIn = change.checkIn { return try await record(checkIn, of: change) }
        let user = change.user, at = change.at
        // Events tagged with what they are about: '' the change itself, `badge:<id>`, `reward:<id>`; a badge's or
        // reward's only if its row is new.
        var streams: [String] = [], ids: [UUID] = [], payloads: [String] = [], tags: [String] = []
        func add(_ row: Outbox.Row, _ tag: String) {
            streams.append(row.stream); ids.append(row.eventID); payloads.append(row.payload); tags.append(tag)
        }
        let subject = user.lowercased
        if let streak = change.announcements.streak { add(try outbox.prepare(streak, subject: subject, at: at), "") }
        for (id, (event, frame, push)) in change.announcements.badges {
            add(try outbox.prepare(event, subject: subject, at: at), "badge:\(id)")
            add(try outbox.prepare(frame, subject: subject, at: at), "badge:\(id)")
            if let push { add(try outbox.prepare(push, subject: subject, at: at), "badge:\(id)") }
        }
        for (id, (event, frame, push)) in change.announcements.rewards {
            add(try outbox.prepare(event, subject: subject, at: at), "reward:\(id)")
            add(try outbox.prepare(frame, subject: subject, at: at), "reward:\(id)")
            if let push { add(try outbox.prepare(push, subject: subject, at: at), "reward:\(id)") }
        }
        let result = try change.checkIn.map { try Self.encode($0.result) } ?? "{}"
        let rows = try await client.execute(CommitChange(change: change, result: result, streams: streams, ids: ids,
                                                         payloads: payloads, tags: tags), logger: logger)
        var written = false
        for try await count in rows { written = count == 1 }
        if written, !streams.isEmpty { outbox.committed() }
        return written
    }

    /// The write of every check-in that changes the streak's row (and of freezes and reminder settings), prepared once
    /// per connection: the row's conditional upsert, the check-in under its key, new badges and rewards, and the
    /// events of what is new, in one statement. (Parsed and planned on every call it was most of a check-in's time in
    /// PostgreSQL; the benchmark's travellers change zone, so each of their check-ins writes the row.)
    struct CommitChange: PostgresPreparedStatement {
        /// Its name on each connection, spelled out: postgres-nio's default reflects the type's name on every call.
        static let name = "gamification.commit_change"
        static let sql = """
            WITH s AS (
                INSERT INTO gamification.streaks AS t (user_id, app, version, zone, reminders, remind_at, updated_at, current, longest,
                    total_days, run_start, last_day, last_instant, last_zone, previous_end, previous_length, freeze_used)
                SELECT $1, $2, $3, $4, $5, $6, $7, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32 WHERE gamification.admit_user($33)
                ON CONFLICT (user_id, app) DO UPDATE SET version = EXCLUDED.version, zone = EXCLUDED.zone, reminders = EXCLUDED.reminders,
                    remind_at = EXCLUDED.remind_at, updated_at = EXCLUDED.updated_at, current = EXCLUDED.current, longest = EXCLUDED.longest,
                    total_days = EXCLUDED.total_days, run_start = EXCLUDED.run_start, last_day = EXCLUDED.last_day,
                    last_instant = EXCLUDED.last_instant, last_zone = EXCLUDED.last_zone, previous_end = EXCLUDED.previous_end,
                    previous_length = EXCLUDED.previous_length, freeze_used = EXCLUDED.freeze_used
                WHERE t.version = $8
                RETURNING 1
            ), c AS (
                INSERT INTO gamification.check_ins (user_id, app, idempotency_key, occurred_at, zone, local_date, counted, result, created_at)
                SELECT $1, $2, $10, $11, $12, $13, $14, $15::jsonb, $7 FROM s WHERE $9
                ON CONFLICT DO NOTHING
            ), b AS (
                INSERT INTO gamification.badges (user_id, app, badge, subject, earned_at)
                SELECT $1, $2, x.badge, x.subject, $7 FROM s, unnest($16::text[], $17::text[]) AS x(badge, subject)
                ON CONFLICT DO NOTHING RETURNING badge
            ), r AS (
                INSERT INTO gamification.rewards (user_id, app, reward, unlocked_at)
                SELECT $1, $2, x.reward, $7 FROM s, unnest($18::text[]) AS x(reward)
                ON CONFLICT DO NOTHING RETURNING reward
            ), o AS (
                INSERT INTO gamification.outbox (stream, event_id, payload)
                SELECT x.stream, x.event_id, x.payload
                FROM unnest($19::text[], $20::uuid[], $21::text[], $22::text[]) WITH ORDINALITY AS x(stream, event_id, payload, tag, n)
                WHERE EXISTS (SELECT 1 FROM s)
                  AND (x.tag = '' OR x.tag IN (SELECT 'badge:' || badge FROM b) OR x.tag IN (SELECT 'reward:' || reward FROM r))
                ORDER BY x.n
            )
            SELECT count(*)::int FROM s
            """
        static let bindingDataTypes: [PostgresDataType] = [
            .uuid, .text, .int8, .text, .bool, .timestamptz, .timestamptz, .int8,
            .bool, .text, .timestamptz, .text, .date, .bool, .text,
            .textArray, .textArray, .textArray, .textArray, .uuidArray, .textArray, .textArray,
            .int8, .int8, .int8, .date, .date, .timestamptz, .text, .date, .int8, .bool, .bytea,
        ]
        typealias Row = Int
        var change: StreakChange
        var result: String
        var streams: [String], ids: [UUID], payloads: [String], tags: [String]

        func makeBindings() throws -> PostgresBindings {
            let checkIn = change.checkIn, state = change.row.state
            var bindings = PostgresBindings(capacity: 33)
            bindings.append(change.user)
            bindings.append(change.app.rawValue)
            bindings.append(change.row.version)
            bindings.append(change.row.zone)
            bindings.append(change.row.reminders)
            bindings.append(change.row.remindAt)
            bindings.append(change.at)
            bindings.append(change.expectedVersion ?? -1)
            bindings.append(checkIn != nil)
            bindings.append(checkIn?.key ?? "")
            bindings.append(checkIn?.occurredAt ?? change.at)
            bindings.append(checkIn?.zone ?? "")
            try bindings.append(checkIn?.result.localDate ?? LocalDay(year: 1970, month: 1, day: 1))
            bindings.append(checkIn?.result.counted ?? false)
            bindings.append(result)
            bindings.append(change.badges.map(\.badge))
            bindings.append(change.badges.map(\.subject))
            bindings.append(change.rewards)
            bindings.append(streams)
            bindings.append(ids)
            bindings.append(payloads)
            bindings.append(tags)
            bindings.append(state.current)
            bindings.append(state.longest)
            bindings.append(state.totalDays)
            try bindings.append(state.runStart)
            try bindings.append(state.lastDay)
            bindings.append(state.lastInstant)
            bindings.append(state.lastZone)
            try bindings.append(state.previousEnd)
            bindings.append(state.previousLength)
            bindings.append(state.freezeUsed)
            bindings.append(ErasedUsers.hash(change.user))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int.self) }
    }

    /// Keeps a check-in that changed nothing under its key: one insert, no condition on the streak's row (the
    /// common case — the app is opened again the same day). False when the key was taken meanwhile.
    private func record(_ checkIn: (key: String, occurredAt: Date, zone: String, result: CheckInResult), of change: StreakChange) async throws -> Bool {
        let rows = try await client.execute(RecordCheckIn(user: change.user, app: change.app.rawValue, key: checkIn.key, occurredAt: checkIn.occurredAt,
                                                          zone: checkIn.zone, localDate: checkIn.result.localDate.description,
                                                          result: try Self.encode(checkIn.result), at: change.at), logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// The read of every check-in, prepared once per connection (planned once, not per request).
    struct ReadStreak: PostgresPreparedStatement {
        static let name = "gamification.read_streak"
        static let sql = """
            SELECT s.version, s.zone, s.reminders, s.remind_at, s.current, s.longest, s.total_days, s.run_start, s.last_day, s.last_instant,
                   s.last_zone, s.previous_end, s.previous_length, s.freeze_used, c.result::text, EXISTS (SELECT 1 FROM gamification.erased_users WHERE user_hash = $4),
                   (SELECT max(k.occurred_at) FROM gamification.check_ins k WHERE k.user_id = $1 AND k.app = $2)
            FROM (SELECT 1) AS one
            LEFT JOIN gamification.streaks s ON s.user_id = $1 AND s.app = $2
            LEFT JOIN gamification.check_ins c ON c.user_id = $1 AND c.app = $2 AND c.idempotency_key = $3
            """
        typealias Row = (StreakRow?, String?, Bool)
        var user: UUID
        var app: String
        var key: String
        var hash: ByteBuffer

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 4)
            bindings.append(user)
            bindings.append(app)
            bindings.append(key)
            bindings.append(hash)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            let (version, zone, reminders, remindAt, current, longest, totalDays, runStart, lastDay, lastInstant, lastZone, previousEnd,
                 previousLength, freezeUsed, result, erased, latestCheckIn) = try row.decode(
                    (Int64?, String?, Bool?, Date?, Int?, Int?, Int?, LocalDay?, LocalDay?, Date?, String?, LocalDay?, Int?, Bool?, String?, Bool, Date?).self)
            let state = StreakStore.state((current, longest, totalDays, runStart, lastDay, lastInstant, lastZone, previousEnd, previousLength, freezeUsed))
            return (state.map { StreakRow(state: $0, version: version ?? 0, zone: zone ?? "UTC", reminders: reminders ?? true, remindAt: remindAt,
                                          latestCheckIn: latestCheckIn) },
                    result, erased)
        }
    }

    /// The insert of a check-in that changed nothing, prepared once per connection.
    struct RecordCheckIn: PostgresPreparedStatement {
        static let name = "gamification.record_check_in"
        static let sql = """
            INSERT INTO gamification.check_ins (user_id, app, idempotency_key, occurred_at, zone, local_date, counted, result, created_at)
            SELECT $1, $2, $3, $4, $5, $6::date, false, $7::jsonb, $8 WHERE gamification.admit_user($9)
            ON CONFLICT DO NOTHING RETURNING 1
            """
        typealias Row = Int
        var user: UUID
        var app: String
        var key: String
        var occurredAt: Date
        var zone: String
        var localDate: String
        var result: String
        var at: Date

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 9)
            bindings.append(user)
            bindings.append(app)
            bindings.append(key)
            bindings.append(occurredAt)
            bindings.append(zone)
            bindings.append(localDate)
            bindings.append(result)
            bindings.append(at)
            bindings.append(ErasedUsers.hash(user))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int.self) }
    }

    /// Sends the reminders that are due (REQ-STR-005): each row's plan is cleared and its push queued in one
    /// transaction, rows locked with `SKIP LOCKED`, so each reminder goes once across replicas and restarts. A plan
    /// whose local midnight has passed (the service was down) is dropped unsent: the streak it would have saved is gone.
    func sendDueReminders(now: Date, limit: Int, push: @Sendable (_ user: UUID, _ app: AppID, _ current: Int) -> PushRequest?) async throws -> Int {
        let sent = try await client.transaction(logger: logger) { connection in
            let rows = try await connection.query("""
                WITH due AS (
                    SELECT user_id, app, remind_at FROM gamification.streaks WHERE remind_at <= \(now)
                    ORDER BY remind_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
                )
                UPDATE gamification.streaks s SET remind_at = NULL FROM due
                WHERE s.user_id = due.user_id AND s.app = due.app
                RETURNING s.user_id, s.app, s.current, due.remind_at
                """, logger: logger)
            var due = 0
            var streams: [String] = [], ids: [UUID] = [], payloads: [String] = []
            for try await (user, app, current, remindAt) in rows.decode((UUID, String, Int, Date).self) {
                due += 1
                guard now < remindAt.addingTimeInterval(Streaks.reminderLead), let app = AppID(rawValue: app),
                      let request = push(user, app, current) else { continue }
                let row = try outbox.prepare(request, subject: user.lowercased, at: now)
                streams.append(row.stream); ids.append(row.eventID); payloads.append(row.payload)
            }
            if !streams.isEmpty {
                try await connection.query("""
                    INSERT INTO \(unescaped: outbox.table) (stream, event_id, payload)
                    SELECT * FROM unnest(\(streams)::text[], \(ids)::uuid[], \(payloads)::text[])
                    """, logger: logger)
            }
            return (due, streams.count)
        }
        if sent.1 > 0 { outbox.committed() }
        return sent.0
    }

    static func encode(_ value: some Encodable) throws -> String { String(decoding: try JSONEncoder.lantern.encode(value), as: UTF8.self) }
    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        do { return try JSONDecoder.lantern.decode(T.self, from: Data(text.utf8)) } catch {
            throw StoreInconsistency("gamification: a stored \(T.self) does not decode: \(error)")
        }
    }
}
