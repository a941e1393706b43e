import Foundation
import LanternCore

/// What a value may be (Req 2.2 for steps; the others documented in Services/HealthBrain/README.md). A value
/// outside is refused with the range named, never clamped.
public enum HealthLimits {
    public static let steps = 0...100_000
    public static let sleepHours = 0.0...24.0
    /// RMSSD / SDNN in milliseconds as HealthKit and Google Fit report them: resting adults fall between about 10
    /// and 200; below 1 or above 300 is a sensor or unit error.
    public static let hrvMilliseconds = 1.0...300.0
    public static let stepsGoal = 100...100_000
    public static let sleepGoalHours = 1.0...16.0
    /// How far back an offline app's batch may reach (Req 14.4): the 30 days the history keeps, today included.
    public static let daysBack = 29
    /// Days in one upload.
    public static let batchDays = 31
}

/// Where a day's values came from (Req 1–2).
public enum HealthSource: String, Codable, Sendable, CaseIterable {
    case healthkit, googlefit, manual

    var isSynced: Bool { self != .manual }
}

/// How the user feeds the pet (Req 2.4): synced from the phone's health store, or typed in. Either may change at
/// any time; it decides which source wins a day that has both.
public enum EntryMode: String, Codable, Sendable, CaseIterable {
    case synced, manual
}

/// One day's values from one source, as uploaded. Goals travel with the values (Req 6.1); a missing goal is the
/// user's setting.
public struct DailyMetrics: Sendable, Equatable {
    public var date: LocalDay
    public var source: HealthSource
    /// When the device read the values: of two uploads of a day and source, the later reading wins.
    public var recordedAt: Date
    public var steps: Int?
    public var sleepHours: Double?
    public var hrvMilliseconds: Double?
    public var stepsGoal: Int?
    public var sleepGoalHours: Double?

    public init(date: LocalDay, source: HealthSource, recordedAt: Date, steps: Int?, sleepHours: Double?, hrvMilliseconds: Double?,
                stepsGoal: Int? = nil, sleepGoalHours: Double? = nil) {
        self.date = date
        self.source = source
        self.recordedAt = recordedAt
        self.steps = steps
        self.sleepHours = sleepHours
        self.hrvMilliseconds = hrvMilliseconds
        self.stepsGoal = stepsGoal
        self.sleepGoalHours = sleepGoalHours
    }
}

/// The user's settings (Req 2.4, 3): entry mode, time zone, thresholds and goals.
public struct PetSettings: Codable, Sendable, Equatable {
    public var mode: EntryMode
    public var timeZone: String
    public var thresholds: Thresholds
    public var stepsGoal: Int
    public var sleepGoalHours: Double

    public static let standard = PetSettings(mode: .synced, timeZone: "UTC", thresholds: .standard, stepsGoal: 8_000, sleepGoalHours: 8)

    public var zone: TimeZone { TimeZoneName.zone(timeZone) ?? .gmt }
}

extension Array where Element == DailyMetrics {
    /// The day's values from its uploads (one per source): the entry mode's sources first, then the latest reading;
    /// a metric missing from the winner is taken from the next that has it.
    func merged(mode: EntryMode) -> DailyMetrics? {
        let ordered = sorted { a, b in
            let aFits = a.source.isSynced == (mode == .synced), bFits = b.source.isSynced == (mode == .synced)
            if aFits != bFits { return aFits }
            return a.recordedAt > b.recordedAt
        }
        guard var day = ordered.first else { return nil }
        for other in ordered.dropFirst() {
            day.steps = day.steps ?? other.steps
            day.sleepHours = day.sleepHours ?? other.sleepHours
            day.hrvMilliseconds = day.hrvMilliseconds ?? other.hrvMilliseconds
            day.stepsGoal = day.stepsGoal ?? other.stepsGoal
            day.sleepGoalHours = day.sleepGoalHours ?? other.sleepGoalHours
        }
        return day
    }
}
