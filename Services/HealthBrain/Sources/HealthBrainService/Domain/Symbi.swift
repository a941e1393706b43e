import Foundation
import LanternContracts
import LanternCore
import Logging

/// What the domain needs stored (`PetStore`).
protocol PetRecords: Sendable {
    func pet(_ user: UUID) async throws -> PetRecord?
    func history(_ user: UUID) async throws -> [DayRecord]
    func evolutions(_ user: UUID) async throws -> [EvolutionRecord]
    func export(_ user: UUID) async throws -> PetExport?
    /// Locks the pet (made from `create` when missing), upserts `metrics`, reads the touched days' rows and records,
    /// and writes what `decide` returns (nil: nothing).
    func update(_ user: UUID, create: PetRecord?, metrics: [DailyMetrics], days: [LocalDay], now: Date,
                decide: @Sendable (PetRecord, _ rows: [LocalDay: [DailyMetrics]], _ days: [LocalDay: DayRecord]) throws -> PetChange?) async throws -> PetRecord?
    func calm(_ user: UUID, key: String, minutes: Int, completedAt: Date, today: LocalDay, now: Date,
              decide: @Sendable (PetRecord, DayRecord?) -> PetChange?) async throws -> CalmOutcome
    /// The pet (nil when not stored), the raw rows and the day records of `dates`, in one read.
    func snapshot(_ user: UUID, dates: [LocalDay]) async throws -> PetSnapshot
    /// Writes an upload's change and its raw rows if the pet's revision is still `change.pet.revision`; false when
    /// another write came first.
    func commit(_ change: PetChange, metrics: [DailyMetrics], now: Date) async throws -> Bool
    func claimBrainRuns(now: Date, limit: Int, plan: @Sendable (PetRecord) -> (day: LocalDay, next: Date)) async throws -> [BrainRun]
    func purgeRawMetrics(processedBefore cutoff: Date) async throws -> Int
}

/// What an upload decides from.
public struct PetSnapshot: Sendable {
    public var pet: PetRecord?
    public var rows: [LocalDay: [DailyMetrics]]
    public var days: [LocalDay: DayRecord]
    /// The user was erased (`user.deleted`): nothing of theirs is written again.
    public var erased: Bool
}

/// A raw row with the time it was processed (the export shows when it will be gone).
public struct StoredMetrics: Sendable, Equatable {
    public var metrics: DailyMetrics
    public var processedAt: Date
}

public struct SessionRecord: Sendable, Equatable {
    public var key: String
    public var minutes: Int
    public var completedAt: Date
}

/// Everything held about a user (Req 11.5).
public struct PetExport: Sendable {
    public var pet: PetRecord
    public var metrics: [StoredMetrics]
    public var days: [DayRecord]
    public var sessions: [SessionRecord]
    public var evolutions: [EvolutionRecord]
}

public enum CalmOutcome: Sendable {
    case calmed(PetRecord)
    /// The same session key again: its first answer stands.
    case replayed(PetRecord)
    /// Not Stressed or Anxious: nothing to calm (Req 7.1).
    case notCalm(PetState)
}

/// A claimed run of the day's brain: the user, the day, and what is kept of it (nil: no data that day).
public struct BrainRun: Sendable {
    public var user: UUID
    public var date: LocalDay
    public var day: DayRecord?
}

/// Symbi's use cases over the store: uploads, settings, sessions, the daily brain, the purge.
/// Symbi's evolution pictures in the shared object storage (`SYMBI_STORAGE`), written by evolution-worker.
protocol EvolutionPictures: Sendable {
    func read(key: String) async throws -> [UInt8]?
}

/// An evolution's picture as the app downloads it.
struct EvolutionPicture: Sendable {
    var evolution: EvolutionRecord
    var bytes: [UInt8]
    var contentType: String
}

struct SymbiCare: Sendable {
    let records: any PetRecords
    let pictures: any EvolutionPictures
    let brain: Brain
    let schedule: BrainSchedule
    let clock: WallClock
    let logger: Logger
    /// Raw rows go this long after processing (Req 11.3: at most 24 h; the purge's interval is taken off).
    let rawRetention: TimeInterval

    /// The picture of one of the user's evolutions (Req 8.3–8.5); nil when the user has no such evolution, or it is
    /// still being drawn, or its picture is gone.
    func picture(of user: UUID, evolution: UUID) async throws -> EvolutionPicture? {
        guard let record = try await records.evolutions(user).first(where: { $0.id == evolution }), let key = record.imageKey,
              let bytes = try await pictures.read(key: key) else { return nil }
        return EvolutionPicture(evolution: record, bytes: bytes, contentType: record.contentType ?? "image/png")
    }

    /// The pet as it is, or a new one's defaults (nothing is stored until the user sends something).
    func pet(of user: UUID) async throws -> PetRecord {
        try await records.pet(user) ?? PetRecord.new(user, at: clock.now())
    }

    /// Folds uploaded days in (Req 1–2, 14.4) as the pet's zone's days (`zone` becomes the pet's zone and re-plans
    /// the brain). One read of the pet, its raw rows and days; the decision; one write conditional on the revision
    /// read — decided again when another write of the same pet came first.
    func upload(_ metrics: [DailyMetrics], zone: String, for user: UUID) async throws -> PetRecord {
        let dates = Array(Set(metrics.map(\.date))).sorted()
        return try await ConcurrentChanges.retrying("pet") { () -> PetRecord? in
            let now = clock.now()
            let snapshot = try await records.snapshot(user, dates: dates)
            if snapshot.erased { throw AccountErased() }
            var pet = snapshot.pet ?? PetRecord.new(user, at: now)
            if zone != pet.settings.timeZone || snapshot.pet == nil { pet.settings.timeZone = zone; pet.brainDueAt = nil }
            if pet.brainDueAt == nil {
                pet.brainDueAt = schedule.next(for: user, in: pet.settings.zone, now: now, lastRun: pet.brainDay, lastRunAt: pet.brainRanAt)
            }
            var rows = snapshot.rows
            for new in metrics {
                var day = rows[new.date] ?? []
                if let index = day.firstIndex(where: { $0.source == new.source }) {
                    if new.recordedAt >= day[index].recordedAt { day[index] = new }
                } else {
                    day.append(new)
                }
                rows[new.date] = day
            }
            let change = PetCare.apply(rows: rows, days: snapshot.days, to: pet, today: LocalDay(now, in: pet.settings.zone), now: now)
            return try await records.commit(change, metrics: metrics, now: now) ? change.pet.committed : nil
        }
    }

    /// Applies a change of settings (already validated); a new zone re-plans the brain.
    func updateSettings(of user: UUID, _ change: @escaping @Sendable (inout PetSettings) -> Void) async throws -> PetRecord {
        let now = clock.now()
        let schedule = schedule
        let pet = try await records.update(user, create: newPet(user, zone: nil, now: now), metrics: [], days: [], now: now) { pet, _, _ in
            var changed = pet
            change(&changed.settings)
            if changed.settings.timeZone != pet.settings.timeZone || changed.brainDueAt == nil {
                changed.brainDueAt = schedule.next(for: user, in: changed.settings.zone, now: now, lastRun: pet.brainDay, lastRunAt: pet.brainRanAt)
            }
            var result = PetChange(pet: changed)
            result.days = []
            return result
        }
        if let pet { return pet }
        return try await self.pet(of: user)
    }

    /// A completed calm session (Req 7): only in Stressed or Anxious; idempotent by key.
    func calm(_ user: UUID, key: String, minutes: Int, completedAt: Date?) async throws -> CalmOutcome {
        let now = clock.now()
        let current = try await pet(of: user)
        let today = LocalDay(now, in: current.settings.zone)
        return try await records.calm(user, key: key, minutes: minutes, completedAt: completedAt ?? now, today: today, now: now) { pet, day in
            guard pet.state.canBeCalmed else { return nil }
            return PetCare.calm(pet, minutes: minutes, today: today, day: day, now: now)
        }
    }

    /// One pass of the day's brain: claims up to `limit` due pets, asks the brain about each claimed day with data
    /// (`concurrency` at a time) and records the answers. Returns how many pets were claimed.
    func runBrain(limit: Int, concurrency: Int) async throws -> Int {
        let now = clock.now()
        let schedule = schedule
        let runs = try await records.claimBrainRuns(now: now, limit: limit) { pet in
            let zone = pet.settings.zone
            let day = schedule.day(of: pet.brainDueAt ?? now, in: zone)
            // The run's slot is its due time (what the store keeps as `brain_ran_at`).
            let ran = min(pet.brainDueAt ?? now, now)
            return (day, schedule.next(for: pet.user, in: zone, now: max(now, schedule.slot(of: pet.user, on: day, in: zone)), lastRun: day,
                                       lastRunAt: ran))
        }
        let work = runs.compactMap { run in run.day.flatMap { $0.descriptors.isEmpty ? nil : (run.user, $0) } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = work.makeIterator()
            func start() -> Bool {
                guard let (user, day) = next.next() else { return false }
                group.addTask { try await think(about: day, of: user) }
                return true
            }
            for _ in 0..<max(1, concurrency) where !start() { break }
            while try await group.next() != nil { _ = start() }
        }
        return runs.count
    }

    private func think(about day: DayRecord, of user: UUID) async throws {
        let decision = await brain.decide(day, user: user)
        if let fallback = decision.fallback {
            // The reason only (a status, a timeout): never the user or the day's values.
            logger.info("the day's brain fell back to the rules", metadata: ["reason": "\(fallback)"])
        }
        // As an upload writes: one read, the decision, one conditional write (again when another write came first).
        try await ConcurrentChanges.retrying("pet") { () -> Void? in
            let now = clock.now()
            let snapshot = try await records.snapshot(user, dates: [day.date])
            guard let pet = snapshot.pet, let current = snapshot.days[day.date] else { return () }  // erased meanwhile
            let change = PetCare.decide(decision.state, source: decision.source, for: current, pet: pet, now: now)
            return try await records.commit(change, metrics: [], now: now) ? () : nil
        }
    }

    /// Deletes every raw row processed more than `rawRetention` ago.
    func purge() async throws -> Int {
        try await records.purgeRawMetrics(processedBefore: clock.now().addingTimeInterval(-rawRetention))
    }

    private func newPet(_ user: UUID, zone: String?, now: Date) -> PetRecord {
        var pet = PetRecord.new(user, at: now)
        if let zone { pet.settings.timeZone = zone }
        pet.brainDueAt = schedule.next(for: user, in: pet.settings.zone, now: now, lastRun: nil)
        return pet
    }
}
