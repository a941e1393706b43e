import Foundation
import LanternCore
import LanternLLM
import Testing
@testable import HealthBrainService

/// The pure rules: thresholds, buckets, the usual HRV, the local brain, the evolution count, the schedule, the
/// prompt and the advice guard.
@Suite struct MoodTests {
    let user = UUID(uuidString: "0190a6b4-1c2d-7e3f-8a4b-5c6d7e8f9a0b")!
    let now = Date(timeIntervalSince1970: 1_795_000_000)

    @Test func thresholdsFollowReq4() {
        let t = Thresholds.standard
        #expect(t.state(steps: 0) == .sad)
        #expect(t.state(steps: 1_999) == .sad)
        #expect(t.state(steps: 2_000) == .resting)
        #expect(t.state(steps: 8_000) == .resting)
        #expect(t.state(steps: 8_001) == .active)
        #expect(Thresholds(sadToResting: 500, restingToActive: 1_000).state(steps: 1_200) == .active)
    }

    @Test func thresholdProblemsNameTheField() {
        #expect(Thresholds(sadToResting: 8_000, restingToActive: 8_000).problems.map(\.field) == ["thresholds.sadToResting"])
        #expect(Thresholds(sadToResting: 9_000, restingToActive: 100).problems.map(\.field) == ["thresholds.sadToResting"])
        #expect(Thresholds(sadToResting: -1, restingToActive: 200_000).problems.map(\.field) == ["thresholds.sadToResting", "thresholds.restingToActive"])
        #expect(Thresholds.standard.problems.isEmpty)
    }

    @Test func bucketsAreRelativeToTheUsersOwnGoals() {
        #expect(DayDescriptors.StepsBucket(steps: 12_000, goal: 8_000) == .above)
        #expect(DayDescriptors.StepsBucket(steps: 12_000, goal: 20_000) == .below)
        #expect(DayDescriptors.StepsBucket(steps: 13_000, goal: 8_000) == .wellAbove)
        #expect(DayDescriptors.StepsBucket(steps: nil, goal: 8_000) == .notRecorded)
        #expect(DayDescriptors.SleepBucket(hours: 5, goal: 8) == .farShort)
        #expect(DayDescriptors.SleepBucket(hours: 7, goal: 8) == .short)
        #expect(DayDescriptors.SleepBucket(hours: 8.5, goal: 8) == .onGoal)
        #expect(DayDescriptors.SleepBucket(hours: 10, goal: 8) == .wellOver)
    }

    @Test func hrvIsComparedWithTheUsualOnceThereIsOne() {
        var baseline = HRVBaseline()
        #expect(DayDescriptors.HRVBucket(milliseconds: 50, baseline: baseline) == .noBaseline)
        for value in [50.0, 52, 48] { baseline = baseline.folding(value) }
        #expect(baseline.days == 3)
        #expect(abs((baseline.usual ?? 0) - 50) < 0.001)
        #expect(DayDescriptors.HRVBucket(milliseconds: 35, baseline: baseline) == .wellBelow)
        #expect(DayDescriptors.HRVBucket(milliseconds: 51, baseline: baseline) == .usual)
        #expect(DayDescriptors.HRVBucket(milliseconds: 65, baseline: baseline) == .wellAbove)
    }

    @Test func theLocalBrainUsesEveryState() {
        var seen: Set<PetState> = []
        for steps in DayDescriptors.StepsBucket.allCases {
            for sleep in DayDescriptors.SleepBucket.allCases {
                for hrv in DayDescriptors.HRVBucket.allCases {
                    let state = LocalBrain.state(for: DayDescriptors(steps: steps, sleep: sleep, hrv: hrv))
                    #expect(PetState.brainChoices.contains(state))
                    seen.insert(state)
                }
            }
        }
        #expect(seen == Set(PetState.brainChoices))
    }

    @Test func labelsAreValidatedNotTrusted() {
        #expect(PetState(label: "Vibrant") == .vibrant)
        #expect(PetState(label: " anxious.\n") == .anxious)
        #expect(PetState(label: "Sad") == nil)  // a Phase 1 state, not one of the brain's seven
        #expect(PetState(label: "Happy") == nil)
        #expect(PetState(label: "Vibrant and calm") == nil)
    }

    /// The whole prompt is the system text, the instruction and three descriptor words: no digit, date or id, for
    /// every combination of buckets.
    @Test func thePromptCarriesNoNumberDateOrId() {
        for steps in DayDescriptors.StepsBucket.allCases {
            for sleep in DayDescriptors.SleepBucket.allCases {
                for hrv in DayDescriptors.HRVBucket.allCases {
                    let request = Brain.request(for: DayDescriptors(steps: steps, sleep: sleep, hrv: hrv), user: user,
                                                date: LocalDay(year: 2026, month: 11, day: 27), budget: .seconds(10))
                    let text = request.system + "\n" + request.prompt
                    #expect(!text.contains { $0.isNumber }, "\(text)")
                    #expect(!text.lowercased().contains(user.uuidString.lowercased()))
                    #expect(PrivacyGuard().finding(in: text) == nil)
                }
            }
        }
    }

    @Test func captionsAndNotificationsGiveNoHealthAdvice() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/HealthBrainService/Catalogue/states.json").standardizedFileURL
        let catalogue = try StateCatalogue.load(url)
        #expect(catalogue.entries.count == PetState.allCases.count)
        #expect(AdviceGuard.finding(in: "You should sleep more tonight") != nil)
        #expect(AdviceGuard.finding(in: "See a doctor about it") != nil)
        #expect(throws: CatalogueError.self) {
            var entries = catalogue.entries
            entries[.tired] = .init(name: "Tired", caption: "Symbi says: try to sleep earlier.")
            _ = try StateCatalogue(entries: entries)
        }
    }

    /// Symbi's notifications (push-worker's catalogue) pass the same guard as the captions.
    @Test func notificationsGiveNoHealthAdvice() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../PushWorker/Sources/PushWorker/Catalogue/en.json").standardizedFileURL
        let catalogue = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: [String: String]])
        let symbi = catalogue.filter { $0.key.hasPrefix("symbi.") }
        #expect(!symbi.isEmpty)
        for (key, texts) in symbi {
            for text in texts.values { #expect(AdviceGuard.finding(in: text) == nil, "\(key): \(text)") }
        }
    }

    /// Day 30 exactly, once: 29 lively days do not evolve, the 30th does, and the same day again does not count.
    @Test func evolutionOnTheThirtiethLivelyDay() {
        var pet = PetRecord.new(user, at: now)
        let start = LocalDay(year: 2026, month: 1, day: 1)
        var evolutions: [EvolutionRecord] = []
        var days: [LocalDay: DayRecord] = [:]
        for offset in 0..<30 {
            let date = start.adding(days: offset)
            let rows = [date: [DailyMetrics(date: date, source: .healthkit, recordedAt: now, steps: 9_000, sleepHours: nil, hrvMilliseconds: nil)]]
            let change = PetCare.apply(rows: rows, days: days, to: pet, today: date, now: now)
            pet = change.pet
            for day in change.days { days[day.date] = day }
            evolutions += change.evolutions
            #expect(change.evolutions.isEmpty == (offset != 29), "day \(offset + 1)")
        }
        #expect(pet.activeDays == 30 && pet.stage == 1 && evolutions.count == 1)
        let last = start.adding(days: 29)
        let again = PetCare.apply(rows: [last: [DailyMetrics(date: last, source: .manual, recordedAt: now, steps: 12_000, sleepHours: nil, hrvMilliseconds: nil)]],
                                  days: days, to: pet, today: last, now: now)
        #expect(again.pet.activeDays == 30 && again.evolutions.isEmpty)
    }

    @Test("30 back-dated lively days in one upload do not evolve an account minutes old; the evolution comes on its 30th day (#44 item 2)")
    func evolutionNeedsTheAccountsAge() throws {
        let zone = try #require(TimeZone(identifier: "Asia/Ho_Chi_Minh"))
        let created = now.addingTimeInterval(-300)
        let young = UUID.v7(at: created)
        #expect(young.v7Date.map { abs($0.timeIntervalSince(created)) < 0.002 } == true && UUID().v7Date == nil)
        var pet = PetRecord.new(young, at: now)
        pet.settings.timeZone = zone.identifier
        let today = LocalDay(now, in: zone)
        var rows: [LocalDay: [DailyMetrics]] = [:]
        for offset in 0..<30 {
            let date = today.adding(days: -offset)
            rows[date] = [DailyMetrics(date: date, source: .healthkit, recordedAt: now, steps: 9_000, sleepHours: nil, hrvMilliseconds: nil)]
        }
        let month = PetCare.apply(rows: rows, days: [:], to: pet, today: today, now: now)
        #expect(month.pet.activeDays == 30 && month.pet.stage == 0 && month.evolutions.isEmpty)
        #expect(PetCare.daysToNextEvolution(month.pet, now: now) == 29)
        var days: [LocalDay: DayRecord] = [:]
        for day in month.days { days[day.date] = day }
        // Day 29 of the account: still not; day 30: the evolution, on an upload of that day.
        for (offset, evolves) in [(28, false), (29, true)] {
            let later = now.addingTimeInterval(Double(offset) * 86_400)
            let date = LocalDay(later, in: zone)
            let change = PetCare.apply(rows: [date: [DailyMetrics(date: date, source: .healthkit, recordedAt: later, steps: 500, sleepHours: nil,
                                                                  hrvMilliseconds: nil)]],
                                       days: days, to: month.pet, today: date, now: later)
            #expect(change.evolutions.count == (evolves ? 1 : 0) && change.pet.stage == (evolves ? 1 : 0), "day \(offset + 1)")
        }
    }

    @Test func lateDataChangesHistoryNotTodaysState() {
        var pet = PetRecord.new(user, at: now)
        let today = LocalDay(year: 2026, month: 3, day: 10)
        pet = PetCare.apply(rows: [today: [DailyMetrics(date: today, source: .manual, recordedAt: now, steps: 100, sleepHours: nil, hrvMilliseconds: nil)]],
                            days: [:], to: pet, today: today, now: now).pet
        #expect(pet.state == .sad && pet.stateDay == today)
        let yesterday = today.adding(days: -1)
        let late = PetCare.apply(rows: [yesterday: [DailyMetrics(date: yesterday, source: .manual, recordedAt: now, steps: 20_000, sleepHours: nil,
                                                                 hrvMilliseconds: nil)]],
                                 days: [:], to: pet, today: today, now: now)
        #expect(late.pet.state == .sad && !late.stateChanged)
        #expect(late.days.first?.state == .active && late.pet.activeDays == 1)
    }

    @Test func theEntryModeChoosesTheSource() {
        let day = LocalDay(year: 2026, month: 3, day: 10)
        let synced = DailyMetrics(date: day, source: .healthkit, recordedAt: now, steps: 9_000, sleepHours: 7, hrvMilliseconds: 40)
        let manual = DailyMetrics(date: day, source: .manual, recordedAt: now.addingTimeInterval(-60), steps: 3_000, sleepHours: nil, hrvMilliseconds: nil)
        #expect([synced, manual].merged(mode: .manual)?.steps == 3_000)
        #expect([synced, manual].merged(mode: .manual)?.sleepHours == 7)
        #expect([synced, manual].merged(mode: .synced)?.steps == 9_000)
    }

    /// Each user's run is in the evening of their own zone, spread over the window, across DST changes.
    @Test func theBrainRunsInTheUsersEvening() {
        let schedule = BrainSchedule(hour: 20, window: .seconds(3 * 3600))
        var calendar = Calendar(identifier: .gregorian)
        for zone in ["Europe/Kyiv", "America/Los_Angeles", "Asia/Ho_Chi_Minh", "Australia/Lord_Howe"] {
            let tz = TimeZone(identifier: zone)!
            calendar.timeZone = tz
            // The day before, of and after a DST change in Europe and the US.
            for day in [LocalDay(year: 2026, month: 3, day: 28), LocalDay(year: 2026, month: 3, day: 29), LocalDay(year: 2026, month: 11, day: 1)] {
                let slot = schedule.slot(of: user, on: day, in: tz)
                #expect(LocalDay(slot, in: tz) == day)
                let hour = calendar.component(.hour, from: slot)
                #expect((20...22).contains(hour), "\(zone) \(day): \(hour)")
            }
        }
        let others = (0..<200).map { _ in schedule.offset(of: UUID()) }
        #expect(Set(others.map { Int($0 / 3600) }).count == 3)  // spread over the three hours
        let tz = TimeZone(identifier: "Europe/Kyiv")!
        let next = schedule.next(for: user, in: tz, now: now, lastRun: LocalDay(now, in: tz))
        #expect(LocalDay(next, in: tz) > LocalDay(now, in: tz))
    }

    @Test("the brain runs once a day whatever the pet's zone does: moved east after a run, the next is still a day on, never under 23 hours (#44 item 3)")
    func brainOncePerDayAcrossZones() throws {
        let schedule = BrainSchedule()
        let zones = ["America/Los_Angeles", "Pacific/Pago_Pago", "Pacific/Kiritimati", "Asia/Tokyo", "Europe/Kyiv", "UTC", "Asia/Kathmandu"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let user = UUID()
            let from = try #require(TimeZone(identifier: zones.randomElement(using: &generator) ?? "UTC"))
            let to = try #require(TimeZone(identifier: zones.randomElement(using: &generator) ?? "UTC"))
            // A run at its slot in the old zone, then a move (an upload or the settings) some minutes to hours later.
            let day = LocalDay(Date(timeIntervalSince1970: 1_796_000_000 + Double.random(in: 0...(86_400 * 300), using: &generator)), in: from)
            let ranAt = schedule.slot(of: user, on: day, in: from)
            let now = ranAt.addingTimeInterval(Double.random(in: 60...(36 * 3600), using: &generator))
            let next = schedule.next(for: user, in: to, now: now, lastRun: day, lastRunAt: ranAt)
            #expect(next.timeIntervalSince(ranAt) >= BrainSchedule.minimumSpacing, "ran \(ranAt) in \(from.identifier), moved to \(to.identifier) at \(now): next \(next)")
            #expect(next > now && next.timeIntervalSince(now) <= 3 * 86_400, "\(next) after \(now)")
        }
        // The case of the finding: Los Angeles after its 20:xx run, then Tokyo (already tomorrow there).
        let user = UUID()
        let la = try #require(TimeZone(identifier: "America/Los_Angeles")), tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
        let ran = schedule.slot(of: user, on: LocalDay(year: 2026, month: 12, day: 1), in: la)
        let next = schedule.next(for: user, in: tokyo, now: ran.addingTimeInterval(600), lastRun: LocalDay(year: 2026, month: 12, day: 1), lastRunAt: ran)
        #expect(next.timeIntervalSince(ran) >= 24 * 3600 - 60)
    }
}
