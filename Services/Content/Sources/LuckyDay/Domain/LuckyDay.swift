import ContentKit
import Foundation
import LanternContracts
import LanternCore

/// What revealing a fortune came to, decided under the user's lock.
enum RevealOutcome: Sendable {
    case revealed(Fortune)
    /// A retry with the same `Idempotency-Key`: the fortune it already got.
    case repeated(Fortune)
    case locked(opensAgainAt: Date)
    case noProfile
    /// This text was already given to the user once: another is offered.
    case duplicateText
    /// The `Idempotency-Key` belongs to an earlier cookie.
    case keyReused
}

/// Everything a break needs to know before it writes, read at once.
struct BreakContext: Sendable {
    var profile: LuckyProfile
    /// Hand-written fortunes the user has had: their position in the pool.
    var artisanalUsed: Int
    var latest: (fortune: Fortune, key: String?)?
    /// The fortune made ahead, with the profile version and local date it was made for.
    var next: (fortune: WrittenFortune, profileVersion: Int, day: LocalDay)?
}

/// Where Lucky Day's state lives (the stores implement it).
protocol LuckyDayRecords: Sendable {
    func profile(of user: UUID) async throws -> LuckyProfile?
    func save(_ profile: LuckyProfile) async throws -> LuckyProfile
    func latest(of user: UUID) async throws -> (Fortune, key: String?)?
    func breakContext(of user: UUID) async throws -> BreakContext?
    /// Reveals `fortune` unless, under the user's lock, the cookie is open or the key or text was used before;
    /// asks for the next fortune to be made at `makeNextAt` and schedules the reminder.
    func reveal(_ fortune: WrittenFortune, user: UUID, key: String?, now: Date, timeZone: String?,
                makeNextAt: @Sendable (Date) -> Date, reminderAt: @Sendable (Date, String) -> Date) async throws -> RevealOutcome
}

/// Where the pillars come from (astrology over HTTP).
protocol BaziSource: Sendable {
    func bazi(_ birth: BirthData) async throws -> BaziAnswer
}

/// Lucky Day's decisions: a profile from birth data (Req 3, 4), the daily cookie (Req 1, 2), the reminder's time.
struct LuckyDay: Sendable {
    let records: any LuckyDayRecords
    let astrology: any BaziSource
    let texts: ProfileTexts
    let writer: FortuneWriter
    let quietHours: QuietHours
    let fortuneBudget: Duration
    let clock: WallClock

    /// Computes the pillars, writes the texts and stores the profile; the birth data is not kept.
    func saveProfile(user: UUID, birth: BirthData, timeZone: String) async throws -> LuckyProfile {
        let reading = BaziReading(try await astrology.bazi(birth)).displayNames()
        let known = birth.time != nil
        let previous = try await records.profile(of: user)
        let texts = await self.texts.write(for: reading, seedParts: ["luckyday", user.uuidString.lowercased(), "profile", String((previous?.version ?? 0) + 1)])
        let pillars = reading.pillars.map { pillar in
            var pillar = pillar
            pillar.assumed = !known && pillar.role == "hour"
            pillar.poem = texts.poems[pillar.role] ?? ""
            return pillar
        }
        let now = clock.now()
        return try await records.save(LuckyProfile(
            userID: user, version: 0, timeZone: timeZone, birthTimeKnown: known, zodiacAnimal: reading.zodiacAnimal,
            yearElement: reading.yearElement, dayMaster: "\(reading.dayMaster.polarity) \(reading.dayMaster.element)", pillars: pillars,
            elements: reading.elements, nickname: texts.nickname, essence: texts.essence, textsArtisanal: texts.artisanal,
            limitations: known ? [] : [LuckyProfile.unknownTimeLimitation], createdAt: now, updatedAt: now))
    }

    /// The cookie now: closed, or open with its fortune.
    func today(user: UUID) async throws -> DailyCookie {
        DailyCookie(latest: try await records.latest(of: user)?.0, now: clock.now())
    }

    /// Breaks the cookie: the fortune made ahead when there is one for today, else one written within the budget.
    func breakCookie(user: UUID, key: String?, timeZone: String?) async throws -> RevealOutcome {
        let started = clock.now()
        guard let context = try await records.breakContext(of: user) else { return .noProfile }
        let now = clock.now()
        switch DailyCookie.breaking(latest: context.latest?.fortune, latestKey: context.latest?.key, key: key, now: now) {
        case .repeatAnswer(let fortune): return .repeated(fortune)
        case .locked(let opensAgainAt): return .locked(opensAgainAt: opensAgainAt)
        case .reveal: break
        }
        let profile = context.profile
        let day = LocalDay(now, in: TimeZoneName.zone(timeZone ?? profile.timeZone) ?? .gmt)
        var fortune: WrittenFortune
        if let next = context.next, next.profileVersion == profile.version, next.day == day {
            fortune = next.fortune
        } else {
            // The budget counts from the request's arrival and keeps back what storing the fortune takes.
            let budget = fortuneBudget - Self.storingReserve - .milliseconds(Int64(max(0, clock.now().timeIntervalSince(started)) * 1000))
            fortune = await writer.write(profile, day: day, poolPosition: context.artisanalUsed, budget: budget)
        }
        let quiet = quietHours
        // A text the user already had (a model can repeat itself) gives way to the next hand-written ones.
        for offset in 0..<8 {
            let outcome = try await records.reveal(
                fortune, user: user, key: key, now: now, timeZone: timeZone,
                makeNextAt: { opensAgainAt in max(now, opensAgainAt.addingTimeInterval(-Self.makeAheadBy)) },
                reminderAt: { readyAt, zone in quiet.deliveryTime(for: readyAt, in: TimeZoneName.zone(zone) ?? .gmt) })
            guard case .duplicateText = outcome else { return outcome }
            fortune = writer.artisanal(profile, day: day, poolPosition: context.artisanalUsed + offset + (fortune.poolPosition == nil ? 0 : 1))
        }
        return .duplicateText
    }

    /// Time a live break keeps back from its budget for storing the fortune (a transaction under load).
    static let storingReserve: Duration = .milliseconds(300)

    /// The next fortune is made this long before the next cookie opens: late enough to stay off the path of the
    /// day's live breaks, early enough to be ready (a model gets `PREGENERATION_BUDGET_SECONDS`).
    static let makeAheadBy: TimeInterval = 3600
}
