import Crypto
import Foundation
import LanternCore
import LanternLLM

/// The model behind the brain: the LLM router, or a test's stand-in.
public protocol MoodModel: Sendable {
    /// Whether a remote model is configured for the brain (otherwise `LocalBrain` decides).
    var hasModel: Bool { get }
    func generate(_ request: LLMRequest) async throws -> GeneratedText
}

/// The day's brain (Req 5–6): the day's descriptors — buckets against the user's own goals and usual values, never a
/// number, a date or an id — go to the model, which must answer one of seven labels. The model is called at most once
/// for a day (the router makes one attempt on one model; the schedule claims the day before the call); no answer in
/// `budget`, or an answer that is not a label, and the day keeps Phase 1's state from steps (Req 6.4), marked `rules`.
public struct Brain: Sendable {
    public static let task = "symbi_brain"
    /// The spec's model (Req 6.2), used when Gemini is configured and `LLM_MODELS_SYMBI_BRAIN` names none.
    public static let defaultGeminiModel = "gemini-2.5-flash-preview-09-2025"

    let model: any MoodModel
    /// The whole wait for the model (Req 6.4: nothing in 10 s → rules).
    let budget: Duration

    public init(model: any MoodModel, budget: Duration = .seconds(10)) {
        self.model = model
        self.budget = budget
    }

    public struct Decision: Sendable, Equatable {
        public var state: PetState
        public var source: StateSource
        /// Why the model's answer was not used, for logs and metrics (never shown).
        public var fallback: String?
    }

    public func decide(_ day: DayRecord, user: UUID) async -> Decision {
        guard model.hasModel else { return Decision(state: LocalBrain.state(for: day.descriptors), source: .local, fallback: nil) }
        let rules = day.ruleState ?? .resting
        do {
            let answer = try await model.generate(Self.request(for: day.descriptors, user: user, date: day.date, budget: budget))
            guard case .model = answer.source else {
                return Decision(state: rules, source: .rules, fallback: answer.fallbacks.last ?? "no model answered")
            }
            guard let state = PetState(label: answer.text) else {
                return Decision(state: rules, source: .rules, fallback: "not a label")
            }
            return Decision(state: state, source: .model, fallback: nil)
        } catch {
            return Decision(state: rules, source: .rules, fallback: "\(error)")
        }
    }

    /// The request: a fixed instruction and three descriptors. The user and date only seed the local generator,
    /// which never leaves the process.
    static func request(for day: DayDescriptors, user: UUID, date: LocalDay, budget: Duration) -> LLMRequest {
        var request = LLMRequest(
            task: task,
            system: """
                You are the mood of Symbi, a small ghost pet that lives on its owner's phone. You are told how the owner's \
                day went, each measure compared with the owner's own goal or usual value. Answer with exactly one word, the \
                pet's mood, from this list: \(PetState.brainChoices.map(\.label).joined(separator: ", ")). Nothing else.
                """,
            instruction: "How does Symbi feel today?",
            descriptors: [
                Descriptor("steps", "Steps today", day.steps.rawValue),
                Descriptor("sleep", "Sleep last night", day.sleep.rawValue),
                Descriptor("hrv", "Heart rate variability", day.hrv.rawValue),
            ],
            format: .choice(PetState.brainChoices.map(\.label)),
            seed: GenerationSeed("symbi", user.uuidString, date.description),
            maxOutputTokens: 16,
            temperature: 0.2,
            budget: budget)
        request.account = user.uuidString.lowercased()
        return request
    }
}

/// When each user's brain runs: once a day at a moment of the evening in the user's own zone (`hour` plus a spread
/// of `window` taken from the user id), so a million users do not all call the model at once, and each call sees
/// most of the day.
public struct BrainSchedule: Sendable {
    public var hour: Int
    public var window: Duration
    /// The least time between two runs of one pet: the shortest local day.
    public static let minimumSpacing: TimeInterval = 23 * 3600

    public init(hour: Int = 20, window: Duration = .seconds(3 * 3600)) {
        self.hour = hour
        self.window = window
    }

    /// The run for `day` in `zone`.
    public func slot(of user: UUID, on day: LocalDay, in zone: TimeZone) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let start = calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day, hour: hour))
            ?? day.start(in: zone).addingTimeInterval(Double(hour) * 3600)
        return start.addingTimeInterval(offset(of: user))
    }

    /// The next run: today's when it is still ahead and today was not run, else tomorrow's — and never sooner after
    /// the last run's slot (`lastRunAt`) than a day, whatever the zone: a pet moved east would otherwise find
    /// "today's" slot a few hours after yesterday's run, and a model be asked twice in a day. A day is taken as 23
    /// hours, the shortest local day, so that the night clocks go forward does not skip the next day's run.
    public func next(for user: UUID, in zone: TimeZone, now: Date, lastRun: LocalDay?, lastRunAt: Date? = nil) -> Date {
        let today = LocalDay(now, in: zone)
        var day = today
        if slot(of: user, on: today, in: zone) <= now || lastRun.map({ $0 >= today }) == true { day = today.adding(days: 1) }
        let earliest = lastRunAt.map { $0.addingTimeInterval(Self.minimumSpacing) } ?? .distantPast
        while slot(of: user, on: day, in: zone) < earliest { day = day.adding(days: 1) }
        return slot(of: user, on: day, in: zone)
    }

    /// The day a run at `instant` is for.
    public func day(of instant: Date, in zone: TimeZone) -> LocalDay { LocalDay(instant, in: zone) }

    func offset(of user: UUID) -> TimeInterval {
        let seconds = max(1, Int(window.inSeconds))
        let digest = SHA256.hash(data: Data(user.uuidString.lowercased().utf8))
        let value = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return TimeInterval(value % UInt64(seconds))
    }
}

/// Words that would make a text health advice. Symbi reflects data as a pet's mood and never advises (no
/// diagnosis, no prescription, no "you should sleep more"): every text shown — the state captions, the
/// notifications — is checked against it (at start-up and in a test).
public enum AdviceGuard {
    static let phrases = [
        "doctor", "physician", "diagnos", "medic", "prescri", "treatment", "therapy", "symptom", "disease", "disorder", "illness",
        "you should", "you must", "try to sleep", "sleep more", "walk more", "exercise more", "drink water", "consult", "health advice",
        "blood pressure", "heart rate is", "insomnia", "depress", "anxiety disorder", "calories",
    ]

    /// The first advice-like phrase in `text`, nil when there is none.
    public static func finding(in text: String) -> String? {
        let lowered = text.lowercased()
        return phrases.first { lowered.contains($0) }
    }
}
