import Foundation
import LanternContracts
import LanternCore

/// One user's pet as stored: settings, the current state, the evolution counters and the brain's plan.
public struct PetRecord: Sendable, Equatable {
    public var user: UUID
    public var settings: PetSettings
    public var state: PetState
    public var source: StateSource
    /// The local day the state is about (nil before any data).
    public var stateDay: LocalDay?
    public var since: Date
    public var version: Int
    /// Days counted in Active or Vibrant (Req 8.1), each day once.
    public var activeDays: Int
    /// Evolutions triggered (the form the pet is growing into).
    public var stage: Int
    /// The current form: the latest evolution whose image is ready.
    public var form: UUID?
    public var formImageKey: String?
    public var mindfulMinutes: Int
    public var hrv: HRVBaseline
    /// When the day's brain runs next, and the last day it was claimed for (never two model calls for a day).
    public var brainDueAt: Date?
    public var brainDay: LocalDay?
    /// The slot of the last run claimed: the next is at least a day later, whatever the zone does
    /// (`BrainSchedule.minimumSpacing`).
    public var brainRanAt: Date? = nil
    /// The stored row's revision (every write bumps it), nil for a pet not stored yet.
    public var revision: Int64? = nil

    public static func new(_ user: UUID, settings: PetSettings = .standard, at now: Date) -> PetRecord {
        PetRecord(user: user, settings: settings, state: .resting, source: .default, stateDay: nil, since: now, version: 1, activeDays: 0,
                  stage: 0, form: nil, formImageKey: nil, mindfulMinutes: 0, hrv: HRVBaseline(), brainDueAt: nil, brainDay: nil)
    }

    /// The pet as stored by a commit of it: one revision on.
    var committed: PetRecord {
        var pet = self
        pet.revision = revision.map { $0 + 1 } ?? 0
        return pet
    }

    var frame: SymbiFrames.State {
        SymbiFrames.State(state: state.rawValue, source: source.rawValue, localDate: stateDay?.description, since: since, version: version,
                          stage: stage, activeDays: activeDays)
    }
}

/// What is kept of a day once its raw values are gone (30 days, Req 14.3): the descriptors, the state from steps,
/// and the day's decided state.
public struct DayRecord: Codable, Sendable, Equatable {
    public var date: LocalDay
    public var descriptors: DayDescriptors
    /// Phase 1's state from the day's steps; nil when no steps were recorded.
    public var ruleState: PetState?
    public var state: PetState
    public var source: StateSource
    /// Counted toward an evolution already (a day counts once, whatever comes later).
    public var activeCounted: Bool
    /// Its HRV went into the usual value already.
    public var hrvFolded: Bool
}

/// An evolution the pet earned; `imageKey` once the worker has drawn it.
public struct EvolutionRecord: Sendable, Equatable {
    public var id: UUID
    public var stage: Int
    public var triggeredAt: Date
    public var activeDays: Int
    public var state: PetState
    public var imageKey: String?
    public var contentType: String?
    public var width: Int?
    public var height: Int?
    public var generator: String?
    public var evolvedAt: Date?
}

/// A change of one pet, decided by `PetCare`, written by the store in one transaction with its events.
public struct PetChange: Sendable {
    public var pet: PetRecord
    public var days: [DayRecord] = []
    public var evolutions: [EvolutionRecord] = []
    /// The state changed: a frame to the app's sockets and a background push to wake it.
    public var stateChanged = false

    public init(pet: PetRecord) { self.pet = pet }
}

/// The decisions about a pet: an upload, a calm session, the brain's answer. Pure: the store reads what they need,
/// locks the pet, calls them and writes what they return.
public struct PetCare: Sendable {
    public static let evolutionEvery = 30

    /// Days the account has lived by `now`, today included: from the local day its id was made (identity makes
    /// account ids as UUIDv7 when it creates them, so the age is the server's word, not the app's). An id that is
    /// not a UUIDv7 lives from today.
    public static func livedDays(of user: UUID, now: Date, zone: TimeZone) -> Int {
        let created = min(user.v7Date ?? now, now)
        return LocalDay(now, in: zone).julianDayNumber - LocalDay(created, in: zone).julianDayNumber + 1
    }

    /// The stage a pet has earned: one per `evolutionEvery` days counted in Active or Vibrant (Req 8.1), and never
    /// more than its account has lived through, so that a month of back-dated days in one upload (free to send,
    /// and an image model's call to draw) cannot buy an evolution (#44 item 2).
    public static func earnedStage(_ pet: PetRecord, now: Date) -> Int {
        min(pet.activeDays, livedDays(of: pet.user, now: now, zone: pet.settings.zone)) / evolutionEvery
    }

    /// Days still needed for the next evolution: counted days, or days of the account's age, whichever is further.
    public static func daysToNextEvolution(_ pet: PetRecord, now: Date) -> Int {
        let needed = evolutionEvery * (pet.stage + 1)
        let lived = livedDays(of: pet.user, now: now, zone: pet.settings.zone)
        return min(evolutionEvery, max(1, needed - pet.activeDays, needed - lived))
    }

    /// Folds uploaded days into the pet: each touched day's descriptors and state from its uploads (`rows`, every
    /// source of that day, the new ones already in), then the pet's current state from the newest day up to today.
    public static func apply(rows: [LocalDay: [DailyMetrics]], days existing: [LocalDay: DayRecord], to pet: PetRecord, today: LocalDay,
                             now: Date) -> PetChange {
        var change = PetChange(pet: pet)
        for date in rows.keys.sorted() {
            guard let merged = rows[date]?.merged(mode: pet.settings.mode) else { continue }
            let before = existing[date]
            var baseline = change.pet.hrv
            let descriptors = DayDescriptors(
                steps: .init(steps: merged.steps, goal: merged.stepsGoal ?? pet.settings.stepsGoal),
                sleep: .init(hours: merged.sleepHours, goal: merged.sleepGoalHours ?? pet.settings.sleepGoalHours),
                hrv: .init(milliseconds: merged.hrvMilliseconds, baseline: baseline))
            var folded = before?.hrvFolded ?? false
            if let hrv = merged.hrvMilliseconds, !folded {
                baseline = baseline.folding(hrv)
                folded = true
            }
            change.pet.hrv = baseline
            let ruleState = merged.steps.map(pet.settings.thresholds.state(steps:))
            // A day the brain or a session decided keeps that state; otherwise the rule speaks (no steps: resting).
            let decided = before.flatMap { $0.source != .rules && $0.source != .default ? $0 : nil }
            var day = DayRecord(date: date, descriptors: descriptors, ruleState: ruleState,
                                state: decided?.state ?? ruleState ?? .resting, source: decided?.source ?? .rules,
                                activeCounted: before?.activeCounted ?? false, hrvFolded: folded)
            count(&day, in: &change, now: now)
            change.days.append(day)
        }
        if let newest = change.days.filter({ $0.date <= today }).max(by: { $0.date < $1.date }) {
            show(newest, in: &change, now: now)
        }
        // Days counted earlier may be owed an evolution the account was too young for then.
        evolve(&change, state: change.pet.state.isLively ? change.pet.state : .active, now: now)
        return change
    }

    /// The brain's answer for `date`: the day's state, and the pet's when that day is its newest.
    public static func decide(_ state: PetState, source: StateSource, for day: DayRecord, pet: PetRecord, now: Date) -> PetChange {
        var change = PetChange(pet: pet)
        var day = day
        day.state = state
        day.source = source
        count(&day, in: &change, now: now)
        change.days.append(day)
        show(day, in: &change, now: now)
        return change
    }

    /// A completed breathing session (Req 7.4): Calm at once, for today.
    public static func calm(_ pet: PetRecord, minutes: Int, today: LocalDay, day: DayRecord?, now: Date) -> PetChange {
        var change = PetChange(pet: pet)
        change.pet.mindfulMinutes += minutes
        change.pet.state = .calm
        change.pet.source = .session
        change.pet.stateDay = max(pet.stateDay ?? today, today)
        change.pet.since = now
        change.pet.version += 1
        change.stateChanged = true
        if var day, day.date == today {
            day.state = .calm
            day.source = .session
            change.days.append(day)
        }
        return change
    }

    /// A newly lively day counts once; every `evolutionEvery` counted days the pet evolves (day 30 exactly), once the
    /// account has lived that long (`earnedStage`).
    private static func count(_ day: inout DayRecord, in change: inout PetChange, now: Date) {
        guard day.state.isLively, !day.activeCounted else { return }
        day.activeCounted = true
        change.pet.activeDays += 1
        evolve(&change, state: day.state, now: now)
    }

    /// Triggers the evolutions the pet has earned and not had (one at most in practice: days count one at a time).
    private static func evolve(_ change: inout PetChange, state: PetState, now: Date) {
        while change.pet.stage < earnedStage(change.pet, now: now) {
            change.pet.stage += 1
            change.evolutions.append(EvolutionRecord(id: .v7(), stage: change.pet.stage, triggeredAt: now, activeDays: change.pet.activeDays,
                                                     state: state, imageKey: nil, contentType: nil, width: nil, height: nil, generator: nil,
                                                     evolvedAt: nil))
        }
    }

    /// Makes `day` the pet's state when it is the pet's newest day (an older day's late data changes only history),
    /// unless a session already calmed the pet that day and the rule would undo it.
    private static func show(_ day: DayRecord, in change: inout PetChange, now: Date) {
        let pet = change.pet
        if let current = pet.stateDay, day.date < current { return }
        if pet.stateDay == day.date, pet.source == .session, day.source == .rules { return }
        guard pet.state != day.state || pet.source != day.source || pet.stateDay != day.date else { return }
        change.pet.state = day.state
        change.pet.source = day.source
        change.pet.stateDay = day.date
        change.pet.since = now
        change.pet.version += 1
        change.stateChanged = true
    }
}
