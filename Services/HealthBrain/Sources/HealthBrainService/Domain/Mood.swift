import Foundation

/// The pet's emotional states: Phase 1's three from steps alone (Req 4), the brain's seven from steps, sleep and
/// HRV together (Req 5.4). Lower case on the wire; the model is asked for the spec's capitalised labels.
public enum PetState: String, Codable, Sendable, CaseIterable {
    case sad, resting, active
    case vibrant, calm, tired, stressed, anxious, rested

    /// The seven labels the brain chooses from (Req 5.4), as the model is asked for them.
    static let brainChoices: [PetState] = [.vibrant, .calm, .tired, .stressed, .anxious, .rested, .active]

    var label: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }

    /// The state a model's label names, nil for anything else (the answer is validated, never trusted).
    init?(label: String) {
        let text = label.trimmingCharacters(in: .whitespacesAndNewlines.union(.punctuationCharacters)).lowercased()
        guard let state = PetState(rawValue: text), Self.brainChoices.contains(state) else { return nil }
        self = state
    }

    /// A day in this state counts toward an evolution (Req 8.1).
    var isLively: Bool { self == .active || self == .vibrant }

    /// "Calm your Symbi" is offered in these (Req 7.1).
    var canBeCalmed: Bool { self == .stressed || self == .anxious }
}

/// Who decided the current state.
public enum StateSource: String, Codable, Sendable {
    /// No data yet: a new pet rests.
    case `default`
    /// Phase 1's rule from the day's steps and the user's thresholds (Req 4), also the brain's fallback (Req 6.4).
    case rules
    /// The configured model's answer for the day (Req 5–6).
    case model
    /// Lantern's own multi-metric rules, the brain of a stack with no model configured.
    case local
    /// A completed calm session (Req 7.4).
    case session
}

/// The step counts between Sad, Resting and Active (Req 3): Sad below `sadToResting`, Active above
/// `restingToActive` (Req 4.1–4.3: "below", "exceeds"), Resting from one to the other, both included.
public struct Thresholds: Codable, Sendable, Equatable {
    public var sadToResting: Int
    public var restingToActive: Int

    public static let standard = Thresholds(sadToResting: 2_000, restingToActive: 8_000)
    public static let range = 0...HealthLimits.steps.upperBound

    public init(sadToResting: Int, restingToActive: Int) {
        self.sadToResting = sadToResting
        self.restingToActive = restingToActive
    }

    /// Phase 1's state from the day's steps (Req 4).
    public func state(steps: Int) -> PetState {
        if steps < sadToResting { return .sad }
        if steps > restingToActive { return .active }
        return .resting
    }

    /// What is wrong with a pair, by field, or nothing (Req 3.4: the lower must stay below the higher).
    public var problems: [(field: String, message: String)] {
        var problems: [(String, String)] = []
        for (field, value) in [("thresholds.sadToResting", sadToResting), ("thresholds.restingToActive", restingToActive)] where !Self.range.contains(value) {
            problems.append((field, "must be a step count from \(Self.range.lowerBound) to \(Self.range.upperBound)"))
        }
        if problems.isEmpty, sadToResting >= restingToActive {
            problems.append(("thresholds.sadToResting", "must be lower than thresholds.restingToActive (\(restingToActive))"))
        }
        return problems
    }
}

/// The day as the brain may see it: each metric as a bucket relative to the user's own goal or usual value, never
/// a number (docs: "What the model sees"). These words are also all that is kept of a day after its raw values go.
public struct DayDescriptors: Codable, Sendable, Equatable {
    public var steps: StepsBucket
    public var sleep: SleepBucket
    public var hrv: HRVBucket

    public init(steps: StepsBucket, sleep: SleepBucket, hrv: HRVBucket) {
        self.steps = steps
        self.sleep = sleep
        self.hrv = hrv
    }

    public enum StepsBucket: String, Codable, Sendable, CaseIterable {
        case notRecorded = "not recorded", farBelow = "far below goal", below = "below goal", close = "close to goal"
        case above = "above goal", wellAbove = "well above goal"

        /// Steps against the day's goal: under a quarter, under three quarters, under the goal, up to one and a half
        /// times it, beyond.
        public init(steps: Int?, goal: Int) {
            guard let steps else { self = .notRecorded; return }
            let ratio = Double(steps) / Double(max(goal, 1))
            self = ratio < 0.25 ? .farBelow : ratio < 0.75 ? .below : ratio < 1 ? .close : ratio <= 1.5 ? .above : .wellAbove
        }
    }

    public enum SleepBucket: String, Codable, Sendable, CaseIterable {
        case notRecorded = "not recorded", farShort = "far short of goal", short = "a little short of goal", onGoal = "on goal"
        case wellOver = "well over goal"

        /// Sleep against the goal: more than 2 h short, more than half an hour short, within half an hour below to an
        /// hour above, more.
        public init(hours: Double?, goal: Double) {
            guard let hours else { self = .notRecorded; return }
            let difference = hours - goal
            self = difference < -2 ? .farShort : difference < -0.5 ? .short : difference <= 1 ? .onGoal : .wellOver
        }
    }

    public enum HRVBucket: String, Codable, Sendable, CaseIterable {
        case notRecorded = "not recorded", noBaseline = "no usual value yet", wellBelow = "well below usual", below = "below usual"
        case usual = "usual", above = "above usual", wellAbove = "well above usual"

        /// HRV against the user's own usual value (`HRVBaseline`), which needs a few days before it means anything.
        public init(milliseconds: Double?, baseline: HRVBaseline) {
            guard let milliseconds else { self = .notRecorded; return }
            guard let usual = baseline.usual else { self = .noBaseline; return }
            let ratio = milliseconds / usual
            self = ratio < 0.8 ? .wellBelow : ratio < 0.93 ? .below : ratio <= 1.07 ? .usual : ratio <= 1.2 ? .above : .wellAbove
        }
    }

    /// Nothing recorded at all: the brain has nothing to say about the day.
    public var isEmpty: Bool { steps == .notRecorded && sleep == .notRecorded && (hrv == .notRecorded || hrv == .noBaseline) }
}

/// The user's usual HRV: an exponential moving average over days (each day folded in once, the first time its HRV
/// arrives), so what is kept is one derived figure, not a history of measurements. It means something after
/// `minimumDays`.
public struct HRVBaseline: Codable, Sendable, Equatable {
    public var average: Double?
    public var days: Int

    public static let minimumDays = 3
    /// Weight of a new day: about a week's memory.
    static let weight = 2.0 / 8.0

    public init(average: Double? = nil, days: Int = 0) {
        self.average = average
        self.days = days
    }

    public var usual: Double? { days >= Self.minimumDays ? average : nil }

    public func folding(_ milliseconds: Double) -> HRVBaseline {
        guard let average else { return HRVBaseline(average: milliseconds, days: 1) }
        // The first days weigh equally (a plain mean), then the moving average takes over.
        let weight = max(Self.weight, 1.0 / Double(days + 1))
        return HRVBaseline(average: average + weight * (milliseconds - average), days: days + 1)
    }
}

/// Lantern's own brain, for a stack with no model configured: the seven states from the same descriptors the model
/// would see, by plain rules, so `make up` shows every state of the pet.
public enum LocalBrain {
    public static func state(for day: DayDescriptors) -> PetState {
        let lowHRV = day.hrv == .below || day.hrv == .wellBelow
        let poorSleep = day.sleep == .farShort || day.sleep == .short
        let goodSleep = day.sleep == .onGoal || day.sleep == .wellOver
        let moving = day.steps == .above || day.steps == .wellAbove
        if day.hrv == .wellBelow && poorSleep { return .anxious }
        if lowHRV { return .stressed }
        if day.sleep == .farShort { return .tired }
        if day.steps == .wellAbove && goodSleep { return .vibrant }
        if moving { return .active }
        if goodSleep && (day.hrv == .above || day.hrv == .wellAbove || day.steps == .close) { return .rested }
        if poorSleep && (day.steps == .farBelow || day.steps == .below) { return .tired }
        return .calm
    }
}
