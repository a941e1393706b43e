import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import Logging
import PostgresNIO

/// Symbi's pets (`health.pets`) with their raw values (`metrics`), days, calm sessions and evolutions. Every change
/// locks the pet's row, lets the domain decide from what it read, and writes the pet, its days and its events (frame,
/// push, evolution) in the same transaction.
struct PetStore: PetRecords {
    static let schema = "health"

    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger

    static let housekeeping: [Housekeeping.Rule] = [
        // The history the app mirrors is 30 days (Req 14.3); a day is kept one more for time zones.
        Housekeeping.Rule("days", sql: "DELETE FROM health.days WHERE local_date < ($1::timestamptz AT TIME ZONE 'UTC')::date", keep: 31 * 86_400),
        Housekeeping.Rule("sessions", sql: "DELETE FROM health.sessions WHERE created_at < $1", keep: 31 * 86_400),
        .processedEvents(schema: schema),
    ]

    // MARK: Reads

    func pet(_ user: UUID) async throws -> PetRecord? {
        let rows = try await client.query(Self.selectPet(user, lock: false), logger: logger)
        for try await row in rows { return try Self.decodePet(row) }
        return nil
    }

    func history(_ user: UUID) async throws -> [DayRecord] {
        let rows = try await client.query("""
            SELECT local_date::text, steps, sleep, hrv, rule_state, state, source, active_counted, hrv_folded
            FROM health.days WHERE user_id = \(user) ORDER BY local_date DESC
            """, logger: logger)
        var days: [DayRecord] = []
        for try await row in rows { days.append(try Self.decodeDay(row)) }
        return days
    }

    func evolutions(_ user: UUID) async throws -> [EvolutionRecord] {
        let rows = try await client.query("""
            SELECT evolution_id, stage, triggered_at, active_days, state, image_key, content_type, width, height, generator, evolved_at
            FROM health.evolutions WHERE user_id = \(user) ORDER BY stage
            """, logger: logger)
        var evolutions: [EvolutionRecord] = []
        for try await (id, stage, triggeredAt, activeDays, state, key, type, width, height, generator, evolvedAt)
            in rows.decode((UUID, Int, Date, Int, String, String?, String?, Int?, Int?, String?, Date?).self) {
            evolutions.append(EvolutionRecord(id: id, stage: stage, triggeredAt: triggeredAt, activeDays: activeDays,
                                              state: try Self.state(state), imageKey: key, contentType: type, width: width, height: height,
                                              generator: generator, evolvedAt: evolvedAt))
        }
        return evolutions
    }

    func export(_ user: UUID) async throws -> PetExport? {
        guard let pet = try await pet(user) else { return nil }
        var metrics: [StoredMetrics] = []
        let rows = try await client.query("""
            SELECT local_date::text, source, recorded_at, steps, sleep_hours, hrv_ms, steps_goal, sleep_goal_hours, processed_at
            FROM health.metrics WHERE user_id = \(user) ORDER BY local_date, source
            """, logger: logger)
        for try await row in rows { metrics.append(try Self.decodeStored(row)) }
        var sessions: [SessionRecord] = []
        let sessionRows = try await client.query("""
            SELECT idempotency_key, minutes, completed_at FROM health.sessions WHERE user_id = \(user) ORDER BY completed_at
            """, logger: logger)
        for try await (key, minutes, completedAt) in sessionRows.decode((String, Int, Date).self) {
            sessions.append(SessionRecord(key: key, minutes: minutes, completedAt: completedAt))
        }
        return PetExport(pet: pet, metrics: metrics, days: try await history(user), sessions: sessions, evolutions: try await evolutions(user))
    }

    // MARK: Changes

    func update(_ user: UUID, create: PetRecord?, metrics: [DailyMetrics], days wanted: [LocalDay], now: Date,
                decide: @Sendable (PetRecord, _ rows: [LocalDay: [DailyMetrics]], _ days: [LocalDay: DayRecord]) throws -> PetChange?) async throws -> PetRecord? {
        let (pet, announced) = try await client.transaction(logger: logger) { connection -> (PetRecord?, Bool) in
            guard let pet = try await lock(user, create: create, on: connection) else { return (nil, false) }
            try await insert(metrics, of: user, now: now, on: connection)
            let dates = Set(metrics.map(\.date))
            let rows = try await rows(of: user, dates: dates, on: connection)
            let days = try await days(of: user, dates: dates.union(wanted), on: connection)
            guard let change = try decide(pet, rows, days) else { return (pet, false) }
            return (change.pet, try await write(change, before: pet, now: now, on: connection))
        }
        if announced { outbox.committed() }
        return pet
    }

    func calm(_ user: UUID, key: String, minutes: Int, completedAt: Date, today: LocalDay, now: Date,
              decide: @Sendable (PetRecord, DayRecord?) -> PetChange?) async throws -> CalmOutcome {
        let (outcome, announced) = try await client.transaction(logger: logger) { connection -> (CalmOutcome, Bool) in
            guard let pet = try await lock(user, create: .new(user, at: now), on: connection) else { return (.notCalm(.resting), false) }
            let earlier = try await connection.query("""
                SELECT minutes FROM health.sessions WHERE user_id = \(user) AND idempotency_key = \(key)
                """, logger: logger)
            for try await _ in earlier.decode(Int.self) { return (.replayed(pet), false) }
            let day = try await days(of: user, dates: [today], on: connection)[today]
            guard let change = decide(pet, day) else { return (.notCalm(pet.state), false) }
            try await connection.query("""
                INSERT INTO health.sessions (user_id, idempotency_key, minutes, completed_at, created_at)
                VALUES (\(user), \(key), \(minutes), \(completedAt), \(now))
                """, logger: logger)
            return (.calmed(change.pet), try await write(change, before: pet, now: now, on: connection))
        }
        if announced { outbox.committed() }
        return outcome
    }

    /// The pet (nil when not stored yet) with the raw rows and day records of `dates`, in one statement: what an
    /// upload decides from.
    func snapshot(_ user: UUID, dates: [LocalDay]) async throws -> PetSnapshot {
        let rows = try await client.execute(Snapshot(user: user, dates: dates.map(\.description), hash: ErasedUsers.hash(user)), logger: logger)
        for try await row in rows {
            let cells = row.makeRandomAccess()
            let pet = try cells[0].decode(UUID?.self, context: .default) == nil ? nil : try Self.decodePet(row)
            let metricsJSON = try cells[Snapshot.columns].decode(String?.self, context: .default)
            let daysJSON = try cells[Snapshot.columns + 1].decode(String?.self, context: .default)
            return PetSnapshot(pet: pet, rows: try Self.metrics(fromJSON: metricsJSON), days: try Self.days(fromJSON: daysJSON),
                               erased: try cells[Snapshot.columns + 2].decode(Bool.self, context: .default))
        }
        return PetSnapshot(pet: nil, rows: [:], days: [:], erased: false)
    }

    /// Writes an upload's decision in one statement: the pet (inserted, or updated only if its revision is still
    /// `change.pet.revision`), the raw rows (the latest reading of a day and source wins), the days, new evolutions
    /// and the events, all or nothing. False when another write came first (nothing was written).
    func commit(_ change: PetChange, metrics: [DailyMetrics], now: Date) async throws -> Bool {
        let pet = change.pet, user = pet.user, subject = user.lowercased
        var streams: [String] = [], ids: [UUID] = [], payloads: [String] = [], tags: [String] = []
        func add(_ row: Outbox.Row, _ tag: String) {
            streams.append(row.stream); ids.append(row.eventID); payloads.append(row.payload); tags.append(tag)
        }
        for evolution in change.evolutions {
            let tag = "evolution:\(evolution.stage)"
            add(try outbox.prepare(SymbiEvents.EvolutionTriggered(evolutionId: evolution.id.lowercased, userId: subject, stage: evolution.stage,
                                                                  activeDays: evolution.activeDays, triggeredAt: evolution.triggeredAt),
                                   subject: subject, at: now), tag)
            add(try outbox.prepare(SymbiEvents.EvolutionRequested(evolutionId: evolution.id.lowercased, userId: subject, stage: evolution.stage,
                                                                  state: evolution.state.rawValue, previousEvolutionId: pet.form?.lowercased,
                                                                  previousImageKey: pet.formImageKey, seed: "\(subject):\(evolution.stage)"),
                                   subject: subject, at: now), tag)
        }
        if change.stateChanged {
            add(try outbox.prepare(try RealtimeFrame(to: [subject], pet.frame), subject: subject, at: now), "")
            add(try outbox.prepare(Self.statePush(pet), subject: subject, at: now), "")
        }
        let rows = try await client.execute(Commit(change: change, metrics: metrics, now: now, hash: ErasedUsers.hash(user),
                                                   outbox: (streams, ids, payloads, tags)), logger: logger)
        var written = false
        for try await count in rows { written = count == 1 }
        if written, !streams.isEmpty { outbox.committed() }
        return written
    }

    /// An upload's write, prepared once per connection (planned once: it is most of the service's writes).
    ///
    /// A new pet is inserted (a pet made meanwhile, or an erased user, stops it); a stored one is updated only at the
    /// revision read. Never an upsert: a pet erased after the read must stay erased. Either admits itself past the
    /// erasure fence (`ErasedUsers`), so that an erasure waits for it or it finds the user erased. Everything else is written only
    /// if the pet was (`FROM p`); an evolution's events only if its row is new.
    struct Commit: PostgresPreparedStatement {
        /// Its name on each connection, spelled out: postgres-nio's default reflects the type's name on every call.
        static let name = "health.commit"
        static let sql = """
            WITH u AS (
                UPDATE health.pets SET mode = $4, zone = $5, sad_to_resting = $6, resting_to_active = $7, steps_goal = $8,
                    sleep_goal_hours = $9, state = $10, state_source = $11, state_day = NULLIF($12, '')::date, state_since = $13, version = $14,
                    active_days = $15, stage = $16, mindful_minutes = $17, hrv_average = $18, hrv_days = $19, brain_due_at = $20,
                    revision = revision + 1, updated_at = $21
                WHERE user_id = $1 AND revision = $3 AND NOT $2 AND health.admit_user($22)
                RETURNING 1
            ), i AS (
                INSERT INTO health.pets (user_id, mode, zone, sad_to_resting, resting_to_active, steps_goal, sleep_goal_hours, state, state_source,
                    state_day, state_since, version, active_days, stage, mindful_minutes, hrv_average, hrv_days, brain_due_at, revision,
                    created_at, updated_at)
                SELECT $1, $4, $5, $6, $7, $8, $9, $10, $11, NULLIF($12, '')::date, $13, $14, $15, $16, $17, $18, $19, $20, 0, $21, $21
                WHERE $2 AND health.admit_user($22)
                ON CONFLICT (user_id) DO NOTHING
                RETURNING 1
            ), p AS (
                SELECT 1 FROM u UNION ALL SELECT 1 FROM i
            ), m AS (
                INSERT INTO health.metrics AS m (user_id, local_date, source, recorded_at, steps, sleep_hours, hrv_ms, steps_goal, sleep_goal_hours,
                                                  processed_at)
                SELECT $1, x.day::date, x.source, x.recorded_at, NULLIF(x.steps, -1), NULLIF(x.sleep, -1), NULLIF(x.hrv, -1),
                       NULLIF(x.steps_goal, -1), NULLIF(x.sleep_goal, -1), $21
                FROM p, unnest($23::text[], $24::text[], $25::timestamptz[], $26::integer[], $27::float8[], $28::float8[], $29::integer[],
                               $30::float8[]) AS x(day, source, recorded_at, steps, sleep, hrv, steps_goal, sleep_goal)
                ON CONFLICT (user_id, local_date, source) DO UPDATE SET recorded_at = EXCLUDED.recorded_at, steps = EXCLUDED.steps,
                    sleep_hours = EXCLUDED.sleep_hours, hrv_ms = EXCLUDED.hrv_ms, steps_goal = EXCLUDED.steps_goal,
                    sleep_goal_hours = EXCLUDED.sleep_goal_hours, processed_at = EXCLUDED.processed_at
                WHERE EXCLUDED.recorded_at >= m.recorded_at
            ), d AS (
                INSERT INTO health.days AS d (user_id, local_date, steps, sleep, hrv, rule_state, state, source, active_counted, hrv_folded, updated_at)
                SELECT $1, x.day::date, x.steps, x.sleep, x.hrv, NULLIF(x.rule_state, ''), x.state, x.source, x.counted, x.folded, $21
                FROM p, unnest($31::text[], $32::text[], $33::text[], $34::text[], $35::text[], $36::text[], $37::text[], $38::boolean[],
                               $39::boolean[]) AS x(day, steps, sleep, hrv, rule_state, state, source, counted, folded)
                ON CONFLICT (user_id, local_date) DO UPDATE SET steps = EXCLUDED.steps, sleep = EXCLUDED.sleep, hrv = EXCLUDED.hrv,
                    rule_state = EXCLUDED.rule_state, state = EXCLUDED.state, source = EXCLUDED.source,
                    active_counted = EXCLUDED.active_counted, hrv_folded = EXCLUDED.hrv_folded, updated_at = EXCLUDED.updated_at
            ), e AS (
                INSERT INTO health.evolutions (evolution_id, user_id, stage, active_days, state, triggered_at)
                SELECT x.id, $1, x.stage, x.active_days, x.state, x.at
                FROM p, unnest($40::uuid[], $41::integer[], $42::integer[], $43::text[], $44::timestamptz[]) AS x(id, stage, active_days, state, at)
                ON CONFLICT (user_id, stage) DO NOTHING
                RETURNING stage
            ), o AS (
                INSERT INTO health.outbox (stream, event_id, payload)
                SELECT x.stream, x.event_id, x.payload
                FROM p, unnest($45::text[], $46::uuid[], $47::text[], $48::text[]) WITH ORDINALITY AS x(stream, event_id, payload, tag, n)
                WHERE x.tag = '' OR x.tag IN (SELECT 'evolution:' || stage FROM e)
                ORDER BY x.n
            )
            SELECT count(*)::int FROM p
            """
        typealias Row = Int
        var change: PetChange
        var metrics: [DailyMetrics]
        var now: Date
        var hash: ByteBuffer
        var outbox: (streams: [String], ids: [UUID], payloads: [String], tags: [String])

        func makeBindings() throws -> PostgresBindings {
            let pet = change.pet, settings = pet.settings, days = change.days, evolutions = change.evolutions
            var b = PostgresBindings(capacity: 48)
            b.append(pet.user)
            b.append(pet.revision == nil)
            b.append(pet.revision ?? -1)
            b.append(settings.mode.rawValue)
            b.append(settings.timeZone)
            b.append(settings.thresholds.sadToResting)
            b.append(settings.thresholds.restingToActive)
            b.append(settings.stepsGoal)
            b.append(settings.sleepGoalHours)
            b.append(pet.state.rawValue)
            b.append(pet.source.rawValue)
            b.append(pet.stateDay?.description ?? "")
            b.append(pet.since)
            b.append(pet.version)
            b.append(pet.activeDays)
            b.append(pet.stage)
            b.append(pet.mindfulMinutes)
            b.append(pet.hrv.average)
            b.append(pet.hrv.days)
            b.append(pet.brainDueAt)
            b.append(now)
            b.append(hash)
            b.append(metrics.map(\.date.description))
            b.append(metrics.map(\.source.rawValue))
            b.append(metrics.map(\.recordedAt))
            b.append(metrics.map { $0.steps ?? -1 })
            b.append(metrics.map { $0.sleepHours ?? -1 })
            b.append(metrics.map { $0.hrvMilliseconds ?? -1 })
            b.append(metrics.map { $0.stepsGoal ?? -1 })
            b.append(metrics.map { $0.sleepGoalHours ?? -1 })
            b.append(days.map(\.date.description))
            b.append(days.map(\.descriptors.steps.rawValue))
            b.append(days.map(\.descriptors.sleep.rawValue))
            b.append(days.map(\.descriptors.hrv.rawValue))
            b.append(days.map { $0.ruleState?.rawValue ?? "" })
            b.append(days.map(\.state.rawValue))
            b.append(days.map(\.source.rawValue))
            b.append(days.map(\.activeCounted))
            b.append(days.map(\.hrvFolded))
            b.append(evolutions.map(\.id))
            b.append(evolutions.map(\.stage))
            b.append(evolutions.map(\.activeDays))
            b.append(evolutions.map(\.state.rawValue))
            b.append(evolutions.map(\.triggeredAt))
            b.append(outbox.streams)
            b.append(outbox.ids)
            b.append(outbox.payloads)
            b.append(outbox.tags)
            return b
        }

        func decodeRow(_ row: PostgresRow) throws -> Int { try row.decode(Int.self) }
    }

    /// A silent push that wakes a closed app to fetch the state; it carries no health data, only the version.
    static func statePush(_ pet: PetRecord) -> PushRequest {
        PushRequest(userId: pet.user.lowercased, app: .symbi, kind: "symbi.state_changed", delivery: .background, collapseKey: "symbi.state",
                    data: ["version": String(pet.version)])
    }

    /// The read of an upload, prepared once per connection: the pet's columns (all null when there is none), then
    /// the raw rows and the day records of the dates, as JSON arrays.
    struct Snapshot: PostgresPreparedStatement {
        static let name = "health.snapshot"
        static let columns = 23
        static let sql = PetStore.petColumnList + """
            ,
                   (SELECT json_agg(json_build_array(m.local_date::text, m.source, extract(epoch FROM m.recorded_at), m.steps, m.sleep_hours, m.hrv_ms,
                                                     m.steps_goal, m.sleep_goal_hours))
                    FROM health.metrics m WHERE m.user_id = $1 AND m.local_date = ANY($2::text[]::date[]))::text,
                   (SELECT json_agg(json_build_array(d.local_date::text, d.steps, d.sleep, d.hrv, d.rule_state, d.state, d.source, d.active_counted,
                                                     d.hrv_folded))
                    FROM health.days d WHERE d.user_id = $1 AND d.local_date = ANY($2::text[]::date[]))::text,
                   EXISTS (SELECT 1 FROM health.erased_users WHERE user_hash = $3)
            FROM (SELECT 1) AS one
            LEFT JOIN health.pets p ON p.user_id = $1
            LEFT JOIN health.evolutions e ON e.evolution_id = p.form
            """
        typealias Row = PostgresRow
        var user: UUID
        var dates: [String]
        var hash: ByteBuffer

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(user)
            bindings.append(dates)
            bindings.append(hash)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
    }

    static func metrics(fromJSON text: String?) throws -> [LocalDay: [DailyMetrics]] {
        guard let text, let items = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[Any]] else { return [:] }
        var found: [LocalDay: [DailyMetrics]] = [:]
        for item in items {
            guard item.count == 8, let date = (item[0] as? String).flatMap(LocalDay.init), let source = (item[1] as? String).flatMap(HealthSource.init),
                  let epoch = (item[2] as? NSNumber)?.doubleValue else {
                throw StoreInconsistency("health: a stored raw row does not decode: \(item)")
            }
            func number(_ index: Int) -> NSNumber? { item[index] as? NSNumber }
            found[date, default: []].append(DailyMetrics(date: date, source: source, recordedAt: Date(timeIntervalSince1970: epoch),
                                                         steps: number(3)?.intValue, sleepHours: number(4)?.doubleValue,
                                                         hrvMilliseconds: number(5)?.doubleValue, stepsGoal: number(6)?.intValue,
                                                         sleepGoalHours: number(7)?.doubleValue))
        }
        return found
    }

    static func days(fromJSON text: String?) throws -> [LocalDay: DayRecord] {
        guard let text, let items = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[Any]] else { return [:] }
        var found: [LocalDay: DayRecord] = [:]
        for item in items {
            guard item.count == 9, let date = (item[0] as? String).flatMap(LocalDay.init),
                  let steps = (item[1] as? String).flatMap(DayDescriptors.StepsBucket.init(rawValue:)),
                  let sleep = (item[2] as? String).flatMap(DayDescriptors.SleepBucket.init(rawValue:)),
                  let hrv = (item[3] as? String).flatMap(DayDescriptors.HRVBucket.init(rawValue:)),
                  let state = (item[5] as? String).flatMap(PetState.init(rawValue:)), let source = (item[6] as? String).flatMap(StateSource.init(rawValue:)),
                  let counted = item[7] as? Bool, let folded = item[8] as? Bool else {
                throw StoreInconsistency("health: a stored day does not decode: \(item)")
            }
            found[date] = DayRecord(date: date, descriptors: DayDescriptors(steps: steps, sleep: sleep, hrv: hrv),
                                    ruleState: (item[4] as? String).flatMap(PetState.init(rawValue:)), state: state, source: source,
                                    activeCounted: counted, hrvFolded: folded)
        }
        return found
    }

    /// Claims the brain runs that are due (`FOR UPDATE SKIP LOCKED`, so replicas share them out): each claimed pet's
    /// `brain_day` moves to the run's day and its next run is planned, committed before any model is called — a
    /// crash after the claim loses that day's call rather than making a second one.
    func claimBrainRuns(now: Date, limit: Int, plan: @Sendable (PetRecord) -> (day: LocalDay, next: Date)) async throws -> [BrainRun] {
        try await client.transaction(logger: logger) { connection in
            let rows = try await connection.query(PostgresQuery(unsafeSQL: Self.petColumns + """
                 WHERE p.brain_due_at <= $1 ORDER BY p.brain_due_at LIMIT $2 FOR UPDATE OF p SKIP LOCKED
                """, binds: try Self.binds(now, limit)), logger: logger)
            var runs: [(pet: PetRecord, day: LocalDay, run: Bool, next: Date)] = []
            for try await row in rows {
                let pet = try Self.decodePet(row)
                let (day, next) = plan(pet)
                runs.append((pet, day, pet.brainDay.map { $0 < day } ?? true, next))
            }
            guard !runs.isEmpty else { return [] }
            try await connection.query("""
                UPDATE health.pets p SET brain_due_at = x.next, brain_day = CASE WHEN x.run THEN x.day::date ELSE p.brain_day END,
                    brain_ran_at = CASE WHEN x.run THEN LEAST(p.brain_due_at, \(now)) ELSE p.brain_ran_at END, revision = p.revision + 1
                FROM unnest(\(runs.map(\.pet.user))::uuid[], \(runs.map(\.next))::timestamptz[], \(runs.map(\.day.description))::text[],
                            \(runs.map(\.run))::boolean[]) AS x(user_id, next, day, run)
                WHERE p.user_id = x.user_id
                """, logger: logger)
            let due = runs.filter(\.run)
            let days = try await connection.query("""
                SELECT d.user_id, d.local_date::text, d.steps, d.sleep, d.hrv, d.rule_state, d.state, d.source, d.active_counted, d.hrv_folded
                FROM health.days d JOIN unnest(\(due.map(\.pet.user))::uuid[], \(due.map(\.day.description))::text[]) AS x(user_id, day)
                  ON d.user_id = x.user_id AND d.local_date = x.day::date
                """, logger: logger)
            var found: [UUID: DayRecord] = [:]
            for try await row in days {
                let user = try row.makeRandomAccess()[0].decode(UUID.self, context: .default)
                found[user] = try Self.decodeDay(row, offset: 1)
            }
            return due.map { BrainRun(user: $0.pet.user, date: $0.day, day: found[$0.pet.user]) }
        }
    }

    /// The worker's image of an evolution: recorded once (a redelivery finds the image set and changes nothing),
    /// made the current form, and announced with a frame and a push.
    func evolved(_ event: SymbiEvents.Evolved, evolution: UUID, user: UUID, now: Date) async throws -> Bool {
        let announced = try await client.transaction(logger: logger) { connection -> Bool in
            let rows = try await connection.query("""
                UPDATE health.evolutions SET image_key = \(event.imageKey), content_type = \(event.contentType), width = \(event.width),
                    height = \(event.height), generator = \(event.generator), evolved_at = \(event.evolvedAt)
                WHERE evolution_id = \(evolution) AND user_id = \(user) AND image_key IS NULL
                RETURNING stage
                """, logger: logger)
            var stage: Int?
            for try await value in rows.decode(Int.self) { stage = value }
            guard let stage else { return false }
            try await connection.query("""
                UPDATE health.pets p SET form = \(evolution), updated_at = \(now), revision = p.revision + 1
                WHERE p.user_id = \(user) AND (p.form IS NULL OR
                    (SELECT e.stage FROM health.evolutions e WHERE e.evolution_id = p.form) < \(stage))
                """, logger: logger)
            let subject = user.lowercased
            try await outbox.enqueue([try RealtimeFrame(to: [subject], SymbiFrames.Evolved(evolutionId: evolution.lowercased, stage: stage))],
                                     at: now, on: connection, logger: logger)
            try await outbox.enqueue([PushRequest(userId: subject, app: .symbi, kind: PushMessage.symbiEvolved.key, delivery: .alert,
                                                  messageKey: PushMessage.symbiEvolved.key, collapseKey: "symbi.evolved",
                                                  data: ["evolutionId": evolution.lowercased])],
                                     at: now, on: connection, logger: logger)
            return true
        }
        if announced { outbox.committed() }
        return announced
    }

    /// Deletes raw values processed before `cutoff` (Req 11.3): one statement over the `processed_at` index.
    func purgeRawMetrics(processedBefore cutoff: Date) async throws -> Int {
        try await client.rowsAffected("DELETE FROM health.metrics WHERE processed_at < \(cutoff)", logger: logger)
    }

    /// Everything of the user, in every table (`user.deleted`), once the erasure is recorded: the writes admitted
    /// before have committed and go too, later ones find the user erased (`ErasedUsers`).
    func erase(_ user: UUID, at now: Date, on connection: PostgresConnection) async throws {
        try await ErasedUsers.record(user, at: now, schema: Self.schema, on: connection, logger: logger)
        for table in ["metrics", "days", "sessions", "evolutions", "pets"] {
            try await connection.query("DELETE FROM health.\(unescaped: table) WHERE user_id = \(user)", logger: logger)
        }
    }

    // MARK: Inside a transaction

    /// The pet's row, locked; made first from `create` when missing (nil: a missing pet stays missing), unless the
    /// user was erased (`AccountErased`). Admits the transaction past the erasure fence first (`ErasedUsers`).
    private func lock(_ user: UUID, create: PetRecord?, on connection: PostgresConnection) async throws -> PetRecord? {
        try await ErasedUsers.admit(user, schema: Self.schema, on: connection, logger: logger)
        if let create {
            try await connection.query("""
                INSERT INTO health.pets (user_id, mode, zone, sad_to_resting, resting_to_active, steps_goal, sleep_goal_hours, state_since,
                                         brain_due_at, created_at, updated_at)
                VALUES (\(user), \(create.settings.mode.rawValue), \(create.settings.timeZone), \(create.settings.thresholds.sadToResting),
                        \(create.settings.thresholds.restingToActive), \(create.settings.stepsGoal), \(create.settings.sleepGoalHours),
                        \(create.since), \(create.brainDueAt), \(create.since), \(create.since))
                ON CONFLICT (user_id) DO NOTHING
                """, logger: logger)
        }
        let rows = try await connection.query(Self.selectPet(user, lock: true), logger: logger)
        for try await row in rows { return try Self.decodePet(row) }
        return nil
    }

    /// Upserts raw values: per day and source the latest reading wins; each row written counts as processed now.
    private func insert(_ metrics: [DailyMetrics], of user: UUID, now: Date, on connection: PostgresConnection) async throws {
        guard !metrics.isEmpty else { return }
        try await connection.query("""
            INSERT INTO health.metrics AS m (user_id, local_date, source, recorded_at, steps, sleep_hours, hrv_ms, steps_goal, sleep_goal_hours, processed_at)
            SELECT \(user), x.day::date, x.source, x.recorded_at, NULLIF(x.steps, -1), NULLIF(x.sleep, -1), NULLIF(x.hrv, -1),
                   NULLIF(x.steps_goal, -1), NULLIF(x.sleep_goal, -1), \(now)
            FROM unnest(\(metrics.map(\.date.description))::text[], \(metrics.map(\.source.rawValue))::text[], \(metrics.map(\.recordedAt))::timestamptz[],
                        \(metrics.map { $0.steps ?? -1 })::integer[], \(metrics.map { $0.sleepHours ?? -1 })::float8[],
                        \(metrics.map { $0.hrvMilliseconds ?? -1 })::float8[], \(metrics.map { $0.stepsGoal ?? -1 })::integer[],
                        \(metrics.map { $0.sleepGoalHours ?? -1 })::float8[])
                 AS x(day, source, recorded_at, steps, sleep, hrv, steps_goal, sleep_goal)
            ON CONFLICT (user_id, local_date, source) DO UPDATE SET recorded_at = EXCLUDED.recorded_at, steps = EXCLUDED.steps,
                sleep_hours = EXCLUDED.sleep_hours, hrv_ms = EXCLUDED.hrv_ms, steps_goal = EXCLUDED.steps_goal,
                sleep_goal_hours = EXCLUDED.sleep_goal_hours, processed_at = EXCLUDED.processed_at
            WHERE EXCLUDED.recorded_at >= m.recorded_at
            """, logger: logger)
    }

    private func rows(of user: UUID, dates: Set<LocalDay>, on connection: PostgresConnection) async throws -> [LocalDay: [DailyMetrics]] {
        guard !dates.isEmpty else { return [:] }
        let rows = try await connection.query("""
            SELECT local_date::text, source, recorded_at, steps, sleep_hours, hrv_ms, steps_goal, sleep_goal_hours, processed_at
            FROM health.metrics WHERE user_id = \(user) AND local_date = ANY(\(dates.map(\.description))::date[])
            """, logger: logger)
        var found: [LocalDay: [DailyMetrics]] = [:]
        for try await row in rows {
            let stored = try Self.decodeStored(row)
            found[stored.metrics.date, default: []].append(stored.metrics)
        }
        return found
    }

    private func days(of user: UUID, dates: Set<LocalDay>, on connection: PostgresConnection) async throws -> [LocalDay: DayRecord] {
        guard !dates.isEmpty else { return [:] }
        let rows = try await connection.query("""
            SELECT local_date::text, steps, sleep, hrv, rule_state, state, source, active_counted, hrv_folded
            FROM health.days WHERE user_id = \(user) AND local_date = ANY(\(dates.map(\.description))::date[])
            """, logger: logger)
        var found: [LocalDay: DayRecord] = [:]
        for try await row in rows {
            let day = try Self.decodeDay(row)
            found[day.date] = day
        }
        return found
    }

    /// Writes a decided change; true when it queued events (the caller wakes the relay after the commit).
    private func write(_ change: PetChange, before _: PetRecord, now: Date, on connection: PostgresConnection) async throws -> Bool {
        let pet = change.pet, user = pet.user
        // Always, so that the revision moves with any change of the pet or its days (an upload decided on the
        // revision it read finds it moved and decides again).
        do {
            try await connection.query("""
                UPDATE health.pets SET mode = \(pet.settings.mode.rawValue), zone = \(pet.settings.timeZone),
                    sad_to_resting = \(pet.settings.thresholds.sadToResting), resting_to_active = \(pet.settings.thresholds.restingToActive),
                    steps_goal = \(pet.settings.stepsGoal), sleep_goal_hours = \(pet.settings.sleepGoalHours), state = \(pet.state.rawValue),
                    state_source = \(pet.source.rawValue), state_day = \(pet.stateDay?.description)::date, state_since = \(pet.since),
                    version = \(pet.version), active_days = \(pet.activeDays), stage = \(pet.stage), mindful_minutes = \(pet.mindfulMinutes),
                    hrv_average = \(pet.hrv.average), hrv_days = \(pet.hrv.days), brain_due_at = \(pet.brainDueAt), updated_at = \(now),
                    revision = revision + 1
                WHERE user_id = \(user)
                """, logger: logger)
        }
        let days = change.days
        if !days.isEmpty {
            try await connection.query("""
                INSERT INTO health.days AS d (user_id, local_date, steps, sleep, hrv, rule_state, state, source, active_counted, hrv_folded, updated_at)
                SELECT \(user), x.day::date, x.steps, x.sleep, x.hrv, NULLIF(x.rule_state, ''), x.state, x.source, x.counted, x.folded, \(now)
                FROM unnest(\(days.map(\.date.description))::text[], \(days.map(\.descriptors.steps.rawValue))::text[],
                            \(days.map(\.descriptors.sleep.rawValue))::text[], \(days.map(\.descriptors.hrv.rawValue))::text[],
                            \(days.map { $0.ruleState?.rawValue ?? "" })::text[], \(days.map(\.state.rawValue))::text[], \(days.map(\.source.rawValue))::text[],
                            \(days.map(\.activeCounted))::boolean[], \(days.map(\.hrvFolded))::boolean[])
                     AS x(day, steps, sleep, hrv, rule_state, state, source, counted, folded)
                ON CONFLICT (user_id, local_date) DO UPDATE SET steps = EXCLUDED.steps, sleep = EXCLUDED.sleep, hrv = EXCLUDED.hrv,
                    rule_state = EXCLUDED.rule_state, state = EXCLUDED.state, source = EXCLUDED.source,
                    active_counted = EXCLUDED.active_counted, hrv_folded = EXCLUDED.hrv_folded, updated_at = EXCLUDED.updated_at
                """, logger: logger)
        }
        let subject = user.lowercased
        var announced = false
        for evolution in change.evolutions {
            let inserted = try await connection.query("""
                INSERT INTO health.evolutions (evolution_id, user_id, stage, active_days, state, triggered_at)
                VALUES (\(evolution.id), \(user), \(evolution.stage), \(evolution.activeDays), \(evolution.state.rawValue), \(evolution.triggeredAt))
                ON CONFLICT (user_id, stage) DO NOTHING RETURNING 1
                """, logger: logger)
            var isNew = false
            for try await _ in inserted.decode(Int.self) { isNew = true }
            guard isNew else { continue }
            try await outbox.enqueue(SymbiEvents.EvolutionTriggered(evolutionId: evolution.id.lowercased, userId: subject, stage: evolution.stage,
                                                                    activeDays: evolution.activeDays, triggeredAt: evolution.triggeredAt),
                                     subject: subject, at: now, on: connection, logger: logger)
            try await outbox.enqueue(SymbiEvents.EvolutionRequested(evolutionId: evolution.id.lowercased, userId: subject, stage: evolution.stage,
                                                                    state: evolution.state.rawValue, previousEvolutionId: pet.form?.lowercased,
                                                                    previousImageKey: pet.formImageKey,
                                                                    seed: "\(subject):\(evolution.stage)"),
                                     subject: subject, at: now, on: connection, logger: logger)
            announced = true
        }
        if change.stateChanged {
            try await outbox.enqueue([try RealtimeFrame(to: [subject], pet.frame)], at: now, on: connection, logger: logger)
            try await outbox.enqueue([Self.statePush(pet)], at: now, on: connection, logger: logger)
            announced = true
        }
        return announced
    }

    // MARK: Rows

    static let petColumns = petColumnList + """

        FROM health.pets p LEFT JOIN health.evolutions e ON e.evolution_id = p.form
        """

    /// The pet's columns, in `decodePet`'s order.
    static let petColumnList = """
        SELECT p.user_id, p.mode, p.zone, p.sad_to_resting, p.resting_to_active, p.steps_goal, p.sleep_goal_hours, p.state, p.state_source,
               p.state_day::text, p.state_since, p.version, p.active_days, p.stage, p.form, e.image_key, p.mindful_minutes, p.hrv_average,
               p.hrv_days, p.brain_due_at, p.brain_day::text, p.revision, p.brain_ran_at
        """

    static func selectPet(_ user: UUID, lock: Bool) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(user)
        return PostgresQuery(unsafeSQL: petColumns + " WHERE p.user_id = $1" + (lock ? " FOR UPDATE OF p" : ""), binds: bindings)
    }

    static func binds(_ now: Date, _ limit: Int) throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(now)
        bindings.append(limit)
        return bindings
    }

    /// The pet from the first columns of `row` (`petColumnList`'s order; a row may carry more after them).
    static func decodePet(_ row: PostgresRow) throws -> PetRecord {
        let cells = row.makeRandomAccess()
        func cell<T: PostgresDecodable>(_ index: Int, _ type: T.Type) throws -> T { try cells[index].decode(T.self, context: .default) }
        let user = try cell(0, UUID.self), mode = try cell(1, String.self), source = try cell(8, String.self)
        guard let entryMode = EntryMode(rawValue: mode), let stateSource = StateSource(rawValue: source) else {
            throw StoreInconsistency("health: pet \(user) has mode \(mode), source \(source)")
        }
        let settings = PetSettings(mode: entryMode, timeZone: try cell(2, String.self),
                                   thresholds: Thresholds(sadToResting: try cell(3, Int.self), restingToActive: try cell(4, Int.self)),
                                   stepsGoal: try cell(5, Int.self), sleepGoalHours: try cell(6, Double.self))
        var pet = PetRecord(user: user, settings: settings, state: try Self.state(try cell(7, String.self)), source: stateSource,
                            stateDay: try cell(9, String?.self).map(Self.day), since: try cell(10, Date.self), version: try cell(11, Int.self),
                            activeDays: try cell(12, Int.self), stage: try cell(13, Int.self), form: try cell(14, UUID?.self),
                            formImageKey: try cell(15, String?.self), mindfulMinutes: try cell(16, Int.self),
                            hrv: HRVBaseline(average: try cell(17, Double?.self), days: try cell(18, Int.self)), brainDueAt: try cell(19, Date?.self),
                            brainDay: try cell(20, String?.self).map(Self.day), revision: try cell(21, Int64.self))
        pet.brainRanAt = try cell(22, Date?.self)
        return pet
    }

    static func decodeDay(_ row: PostgresRow, offset: Int = 0) throws -> DayRecord {
        let cells = row.makeRandomAccess()
        func cell<T: PostgresDecodable>(_ index: Int, _ type: T.Type) throws -> T { try cells[offset + index].decode(T.self, context: .default) }
        let date = try cell(0, String.self), steps = try cell(1, String.self), sleep = try cell(2, String.self)
        let hrv = try cell(3, String.self), ruleState = try cell(4, String?.self), state = try cell(5, String.self)
        let source = try cell(6, String.self), counted = try cell(7, Bool.self), folded = try cell(8, Bool.self)
        guard let stepsBucket = DayDescriptors.StepsBucket(rawValue: steps), let sleepBucket = DayDescriptors.SleepBucket(rawValue: sleep),
              let hrvBucket = DayDescriptors.HRVBucket(rawValue: hrv), let source = StateSource(rawValue: source) else {
            throw StoreInconsistency("health: a stored day does not decode (\(steps), \(sleep), \(hrv), \(source))")
        }
        return DayRecord(date: try day(date), descriptors: DayDescriptors(steps: stepsBucket, sleep: sleepBucket, hrv: hrvBucket),
                         ruleState: try ruleState.map(Self.state), state: try Self.state(state), source: source, activeCounted: counted,
                         hrvFolded: folded)
    }

    static func decodeStored(_ row: PostgresRow) throws -> StoredMetrics {
        let (date, source, recordedAt, steps, sleep, hrv, stepsGoal, sleepGoal, processedAt) =
            try row.decode((String, String, Date, Int?, Double?, Double?, Int?, Double?, Date).self)
        guard let source = HealthSource(rawValue: source) else { throw StoreInconsistency("health: a stored source '\(source)'") }
        return StoredMetrics(metrics: DailyMetrics(date: try day(date), source: source, recordedAt: recordedAt, steps: steps, sleepHours: sleep,
                                                   hrvMilliseconds: hrv, stepsGoal: stepsGoal, sleepGoalHours: sleepGoal),
                             processedAt: processedAt)
    }

    static func state(_ text: String) throws -> PetState {
        guard let state = PetState(rawValue: text) else { throw StoreInconsistency("health: a stored state '\(text)'") }
        return state
    }

    static func day(_ text: String) throws -> LocalDay {
        guard let day = LocalDay(text) else { throw StoreInconsistency("health: a stored date '\(text)'") }
        return day
    }
}
