import ContentKit
import Foundation
import LanternCore
import Synchronization

/// What RoastMeLater keeps of its collections (`CollectionStore`, over `content.roast_collections`).
protocol CollectionRecords: Sendable {
    /// Inserts the catalogue's collections that are not there yet (an operator's edits and retirements stay).
    func seed(_ collections: [RoastCollection], at date: Date) async throws
    func all() async throws -> [StoredCollection]
    func collection(_ id: String) async throws -> StoredCollection?
    /// Creates it at version 1 with its audit record; nil when the id is taken.
    func create(_ collection: RoastCollection, by operatorName: String, at date: Date) async throws -> StoredCollection?
    /// Applies `change` to the current version under a row lock and records what changed; `.stale` when
    /// `expectedVersion` is given and is not the current one.
    func update(_ id: String, expectedVersion: Int?, by operatorName: String, at date: Date,
                change: @escaping @Sendable (StoredCollection) -> (RoastCollection, retired: Bool)) async throws -> CollectionUpdate
    /// The audit trail of one collection, newest first.
    func changes(of id: String) async throws -> [CollectionChange]
    /// The scenarios the user has roasted, by collection.
    func progress(of user: UUID) async throws -> [String: Set<String>]
}

enum CollectionUpdate: Sendable, Equatable {
    case saved(StoredCollection)
    case unchanged(StoredCollection)
    case stale(current: Int)
    case missing
}

/// The festival dates of the Vietnamese lunar calendar, from astrology.
protocol FestivalDates: Sendable {
    /// Festival key → its dates in the Gregorian years `year - 1 … year + 1`; nil when astrology does not answer now.
    func around(year: Int) async -> [String: [String]]?
}

/// A collection as a user sees it on a day.
struct CollectionOnDay: Sendable, Equatable {
    var collection: RoastCollection
    var version: Int
    var window: CollectionWindow
    /// The scenarios this user has roasted.
    var roasted: Set<String>

    var completed: Bool { collection.scenarios.allSatisfy { roasted.contains($0.id) } }
}

/// What a roast asked "in" a collection resolves to.
enum CollectionChoice: Sendable, Equatable {
    case chosen(RoastCollection, RoastCollection.Scenario)
    case unknownCollection
    /// It exists but does not show today.
    case notRunning
    case unknownScenario
}

/// Collections (REQ-COL): which show on a user's day, what a roast in one means, and the operators' changes.
struct Collections: Sendable {
    let records: any CollectionRecords
    let festivals: any FestivalDates
    let catalogue: RoastCatalogue
    /// `Catalogue/collections.json`: inserted once per process, before the first read.
    let seeds: [RoastCollection]
    let clock: WallClock
    private let seeded = SeedFlag()

    init(records: any CollectionRecords, festivals: any FestivalDates, catalogue: RoastCatalogue, seeds: [RoastCollection], clock: WallClock) {
        self.records = records
        self.festivals = festivals
        self.catalogue = catalogue
        self.seeds = seeds
        self.clock = clock
    }

    final class SeedFlag: Sendable {
        let done = Mutex(false)
    }

    private func ensureSeeded() async throws {
        guard !seeded.done.withLock({ $0 }) else { return }
        try await records.seed(seeds, at: clock.now())
        seeded.done.withLock { $0 = true }
    }

    /// The collections showing on `date` (the user's local day), each with the user's progress; permanent first,
    /// then the rotating and the seasonal ones, each group in id order.
    func showing(to user: UUID, on date: String) async throws -> [CollectionOnDay] {
        try await ensureSeeded()
        let all = try await records.all().filter { !$0.retired }
        let year = LocalDay(date)?.year ?? 2000
        let dates = all.contains { if case .seasonal = $0.collection.schedule { true } else { false } } ? await festivals.around(year: year) : [:]
        let progress = try await records.progress(of: user)
        let order = ["permanent": 0, "monthly": 1, "seasonal": 2]
        return all.compactMap { stored in
            guard let window = CollectionSchedules.window(stored.collection.schedule, on: date, festivals: dates) else { return nil }
            return CollectionOnDay(collection: stored.collection, version: stored.version, window: window, roasted: progress[stored.collection.id] ?? [])
        }.sorted { (order[$0.collection.schedule.kind] ?? 3, $0.collection.id) < (order[$1.collection.schedule.kind] ?? 3, $1.collection.id) }
    }

    /// The collection and scenario of a roast: it must be showing on the user's day; without a scenario, the first
    /// the user has not roasted yet (then the first again once all are).
    func choose(collection id: String, scenario scenarioID: String?, user: UUID, on date: String) async throws -> CollectionChoice {
        try await ensureSeeded()
        guard let stored = try await records.collection(id), !stored.retired else { return .unknownCollection }
        let collection = stored.collection
        var dates: [String: [String]]? = [:]
        if case .seasonal = collection.schedule { dates = await festivals.around(year: LocalDay(date)?.year ?? 2000) }
        guard CollectionSchedules.window(collection.schedule, on: date, festivals: dates) != nil else { return .notRunning }
        if let scenarioID {
            guard let scenario = collection.scenario(scenarioID) else { return .unknownScenario }
            return .chosen(collection, scenario)
        }
        let roasted = try await records.progress(of: user)[collection.id] ?? []
        guard let scenario = collection.scenarios.first(where: { !roasted.contains($0.id) }) ?? collection.scenarios.first else { return .unknownScenario }
        return .chosen(collection, scenario)
    }

    // MARK: Operators

    enum OperatorOutcome: Sendable, Equatable {
        case saved(StoredCollection)
        case unchanged(StoredCollection)
        case invalid([FieldProblem])
        case exists
        case missing
        case stale(current: Int)
        /// A seasonal schedule needs astrology's festival list, which is not answering.
        case festivalsUnavailable
    }

    struct FieldProblem: Sendable, Equatable {
        var field: String
        var message: String
    }

    func all() async throws -> [StoredCollection] {
        try await ensureSeeded()
        return try await records.all()
    }

    func create(_ collection: RoastCollection, by operatorName: String) async throws -> OperatorOutcome {
        try await ensureSeeded()
        if let refusal = await check(collection) { return refusal }
        guard let stored = try await records.create(collection, by: operatorName, at: clock.now()) else { return .exists }
        return .saved(stored)
    }

    /// Replaces the definition (the id stays); `expectedVersion` (the `If-Match` of the operator's copy) refuses an
    /// edit made on a version someone else has since changed.
    func edit(_ id: String, to collection: RoastCollection, expectedVersion: Int?, by operatorName: String) async throws -> OperatorOutcome {
        try await ensureSeeded()
        var edited = collection
        edited.id = id
        if let refusal = await check(edited) { return refusal }
        let replacement = edited
        return Self.outcome(try await records.update(id, expectedVersion: expectedVersion, by: operatorName, at: clock.now()) { current in
            (replacement, current.retired)
        })
    }

    /// Retires (hides from every app, keeps its history and the users' roasts) or restores it.
    func setRetired(_ retired: Bool, _ id: String, expectedVersion: Int?, by operatorName: String) async throws -> OperatorOutcome {
        try await ensureSeeded()
        return Self.outcome(try await records.update(id, expectedVersion: expectedVersion, by: operatorName, at: clock.now()) { current in
            (current.collection, retired)
        })
    }

    private static func outcome(_ update: CollectionUpdate) -> OperatorOutcome {
        switch update {
        case .saved(let stored): .saved(stored)
        case .unchanged(let stored): .unchanged(stored)
        case .stale(let current): .stale(current: current)
        case .missing: .missing
        }
    }

    private func check(_ collection: RoastCollection) async -> OperatorOutcome? {
        var known: Set<String> = []
        if case .seasonal = collection.schedule {
            guard let dates = await festivals.around(year: LocalDay(clock.now(), in: .gmt).year) else {
                return .festivalsUnavailable
            }
            known = Set(dates.keys)
        }
        let problems = collection.problems(catalogue: catalogue, festivals: known)
        return problems.isEmpty ? nil : .invalid(problems.map { FieldProblem(field: $0.field, message: $0.message) })
    }
}
