import Foundation
import GamificationService
import LanternCore

/// The streak recomputed from the days counted — a second, deliberately naive implementation of the rules in
/// Services/Gamification/README.md ("Streaks") that the property test holds the service's O(1) state against.
///
/// It keeps every counted day and which days join their predecessor across a gap (a flight east, the freeze), and
/// derives current, longest and total from that list each time it is asked.
struct StreakModel {
    /// Counted days, and for each whether it joins the counted day before it although not the next calendar day.
    private(set) var days: [LocalDay: Bool] = [:]
    /// The zone of the check-in that counted the latest day.
    private var latestZone: TimeZone?
    /// The open gap: the last day of the run before it and the first of the run after it.
    private var gap: (LocalDay, LocalDay)?
    private(set) var freezeUsed = false

    var sorted: [LocalDay] { days.keys.sorted() }

    /// Runs of joined days, oldest first.
    var runs: [[LocalDay]] {
        var runs: [[LocalDay]] = []
        for day in sorted {
            if let last = runs.last?.last, day == last.adding(days: 1) || days[day] == true {
                runs[runs.count - 1].append(day)
            } else {
                runs.append([day])
            }
        }
        return runs
    }

    /// What the service answers, recomputed from the days (the runs are worked out once).
    struct Snapshot: Equatable {
        var current: Int
        var longest: Int
        var total: Int
        var lastDay: LocalDay?
        var freezeOffer: Int?
    }

    var snapshot: Snapshot {
        let runs = runs
        var offer: Int?
        if !freezeUsed, let gap, let run = runs.last(where: { $0.last == gap.0 }), run.count >= StreakRules.freezeAfter { offer = run.count }
        return Snapshot(current: runs.last?.count ?? 0, longest: runs.map(\.count).max() ?? 0, total: days.count, lastDay: runs.last?.last,
                        freezeOffer: offer)
    }

    var current: Int { snapshot.current }
    var longest: Int { snapshot.longest }
    var total: Int { days.count }
    var lastDay: LocalDay? { days.keys.max() }
    var freezeOffer: Int? { snapshot.freezeOffer }

    mutating func checkIn(_ instant: Date, zone: TimeZone) {
        let day = LocalDay(instant, in: zone)
        guard let last = lastDay else {
            days[day] = false
            latestZone = zone
            return
        }
        if day > last {
            // Not a new day where the latest day was counted (the same instant from across the date line): nothing.
            if let zone = latestZone, LocalDay(instant, in: zone) <= last { return }
            let next = last.adding(days: 1)
            let joins = day == next || latestZone.map { LocalDay(instant, in: $0) <= next } == true
            days[day] = day != next && joins
            if !joins { gap = (last, day) }
            latestZone = zone
            return
        }
        // A day at or before the latest: only a day of the open gap next to one of its ends.
        guard let (before, after) = gap, day > before, day < after, days[day] == nil else { return }
        let first = day == before.adding(days: 1), final = day == after.adding(days: -1)
        guard first || final else { return }
        days[day] = false
        if first && final { gap = nil } else if first { gap = (day, after) } else { gap = (before, day) }
    }

    mutating func freeze() -> Bool {
        guard freezeOffer != nil, let gap else { return false }
        days[gap.1] = true
        freezeUsed = true
        self.gap = nil
        return true
    }
}
