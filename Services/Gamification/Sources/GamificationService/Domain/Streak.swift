import Foundation
import LanternCore

/// A user's streak in one app: the days in a row they opened it, counted in **local calendar days of the zone each
/// check-in was made in** (the product decision on REQ-STR-001/002), never in periods of 24 hours.
///
/// The whole state is a handful of values, so a check-in is one read and one conditional write whatever the history
/// (`StreakStore`): the current run (its first and last day, its length), the run before it while the gap between
/// them may still be filled by a late check-in, the totals, and the zone and instant of the last counted check-in for
/// travel. The rules (Services/Gamification/README.md, "Streaks") are those of `apply(_:)`, `fillGap` and `freeze`; a property
/// test replays thousands of random histories against a model that recomputes the streak from the counted days.
public struct StreakState: Sendable, Equatable, Codable {
    /// Days in the current run (as last counted; `current(on:)` says whether it is still alive today).
    public var current: Int = 0
    public var longest: Int = 0
    /// Distinct local days counted, ever.
    public var totalDays: Int = 0
    /// The current run's first and last counted day.
    public var runStart: LocalDay?
    public var lastDay: LocalDay?
    /// The last counted check-in's instant and zone: a check-in after a flight is judged in both zones.
    public var lastInstant: Date?
    public var lastZone: String?
    /// The run before the current one (its last day and length), kept while the gap after it is open: a late
    /// check-in from an app that was offline may still fill it, and a lost run of 7+ days may be restored once.
    public var previousEnd: LocalDay?
    public var previousLength: Int?
    /// The one streak freeze of the account (REQ-STR-006) was used.
    public var freezeUsed: Bool = false

    public init() {}

    /// The streak as of `today` in the user's zone: alive while its last day is today or yesterday.
    public func current(on today: LocalDay) -> Int {
        guard let lastDay, lastDay >= today.adding(days: -1) else { return 0 }
        return current
    }

    /// Alive, but nothing counted today yet: a check-in today keeps it (the reminder's condition).
    public func atRisk(on today: LocalDay) -> Bool { current(on: today) > 0 && lastDay != today }

    /// The freeze on offer: the length of the lost run it would bring back, while the gap after it is open, the run
    /// was 7 days or more and the freeze was never used.
    public var freezeOffer: Int? {
        guard !freezeUsed, previousEnd != nil, let previousLength, previousLength >= StreakRules.freezeAfter else { return nil }
        return previousLength
    }
}

/// One app open: when it happened (the client's clock) and where (IANA zone).
public struct CheckIn: Sendable, Equatable {
    public var occurredAt: Date
    public var zone: TimeZone
    /// The zone as the app named it, which is what is stored and answered: Foundation calls `UTC` `GMT`, and a link
    /// (`Europe/Kiev`) may come back as another name.
    public var zoneName: String

    public init(occurredAt: Date, zone: TimeZone, name: String? = nil) {
        self.occurredAt = occurredAt
        self.zone = zone
        self.zoneName = name ?? zone.identifier
    }

    public var day: LocalDay { LocalDay(occurredAt, in: zone) }
}

/// What a check-in did to the streak.
public enum CheckInOutcome: String, Sendable, Equatable, Codable {
    /// A new day after the last one, the run goes on.
    case extended
    /// A new day after a whole missed day: a new run of 1.
    case restarted
    /// The first day ever.
    case started
    /// A late check-in (an app that was offline) for a day in the open gap before the current run: it counted.
    case filled
    /// The day is counted already, or lies before the current run where it cannot join anything: nothing changed.
    case alreadyCounted
}

public enum StreakRules {
    /// A lost run of at least this many days can be restored by the freeze (REQ-STR-006).
    public static let freezeAfter = 7
    /// How late a check-in may arrive (an app that was offline): its event time may be this far in the past.
    public static let lateTolerance: TimeInterval = 72 * 3600
    /// How far ahead of the server's clock a device's clock may be.
    public static let clockSkew: TimeInterval = 5 * 60
}

extension StreakState {
    /// Counts `checkIn`: the rules of REQ-STR-001/002 with the product's calendar-day decision.
    ///
    /// - A day after the last counted one counts. The run goes on when it is the next calendar day, or when the
    ///   check-in's instant is still no later than the next day **in the zone of the last check-in** (a flight east,
    ///   Los Angeles → Hanoi, skips a local date in the new zone but no day was missed); otherwise a whole day was
    ///   missed and a new run starts.
    /// - The same day again, or an earlier one (a second device, a flight west, a late check-in) never counts
    ///   twice and never rolls the streak back; only a late day in the open gap just before the current run (or just
    ///   after the run before it) is added, joining the runs when it closes the gap.
    /// - A new day must also be a new day in the zone of the last counted check-in: the same instant sent from across
    ///   the date line (Pago Pago, then Kiritimati) is no new day, since a real traveller's hop takes hours (#44).
    public mutating func apply(_ checkIn: CheckIn) -> CheckInOutcome {
        let day = checkIn.day
        guard let lastDay else {
            self.current = 1
            self.runStart = day
            record(checkIn, day: day)
            return .started
        }
        guard day > lastDay else { return fillGap(day) }
        if let zone = lastZone.flatMap(TimeZoneName.zone), LocalDay(checkIn.occurredAt, in: zone) <= lastDay { return .alreadyCounted }
        let continues: Bool
        if day == lastDay.adding(days: 1) {
            continues = true
        } else if let zone = lastZone.flatMap(TimeZoneName.zone) {
            continues = LocalDay(checkIn.occurredAt, in: zone) <= lastDay.adding(days: 1)
        } else {
            continues = false
        }
        if continues {
            current += 1
        } else {
            previousEnd = lastDay
            previousLength = current
            current = 1
            runStart = day
        }
        record(checkIn, day: day)
        return continues ? .extended : .restarted
    }

    private mutating func record(_ checkIn: CheckIn, day: LocalDay) {
        totalDays += 1
        longest = max(longest, current)
        lastDay = day
        lastInstant = checkIn.occurredAt
        lastZone = checkIn.zoneName
    }

    /// A late day before the current run: counted only in the open gap next to one of its ends.
    private mutating func fillGap(_ day: LocalDay) -> CheckInOutcome {
        guard let previousEnd, let previousLength, let runStart, day > previousEnd, day < runStart else { return .alreadyCounted }
        totalDays += 1
        let afterPrevious = day == previousEnd.adding(days: 1), beforeRun = day == runStart.adding(days: -1)
        switch (afterPrevious, beforeRun) {
        case (true, true):
            // The gap was this one day: the runs are one again, nothing was lost.
            current += previousLength + 1
            self.runStart = nil  // the run's start is no longer needed: no gap is open
            self.previousEnd = nil
            self.previousLength = nil
        case (true, false):
            self.previousEnd = day
            self.previousLength = previousLength + 1
            longest = max(longest, previousLength + 1)
        case (false, true):
            self.runStart = day
            current += 1
        case (false, false):
            // In the middle of a gap of several days: it cannot join either run, and does not count.
            totalDays -= 1
            return .alreadyCounted
        }
        longest = max(longest, current)
        return .filled
    }

    /// Uses the freeze on offer: the lost run and the current one become one streak; the missed days do not count as
    /// active days. Nil when no freeze is on offer.
    public mutating func freeze() -> Int? {
        guard let restored = freezeOffer else { return nil }
        current += restored
        longest = max(longest, current)
        freezeUsed = true
        previousEnd = nil
        previousLength = nil
        runStart = nil
        return restored
    }
}
