import Foundation
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

/// Where Lucky Day's state lives (the stores implement it).
protocol LuckyDayRecords: Sendable {
    func profile(of user: UUID) async throws -> LuckyProfile?
    func save(_ profile: LuckyProfile) async throws -> LuckyProfile
    func latest(of user: UUID) async throws -> (Fortune, key: String?)?
    func next(for user: UUID, profileVersion: Int, day: LocalDay) async throws -> WrittenFortune?
    func artisanalUsed(by user: UUID) async throws -> Int
    func reveal(_ fortune: WrittenFortune, user: UUID, key: String?, now: Date, timeZone: String?,
                reminderAt: @Sendable (Date, LuckyProfile) -> Date) async throws -> RevealOutcome
}

/// Where the pillars come from (astrology over HTTP).
protocol BaziSource: Sendable {
    func bazi(_ birth: BirthData) async throws -> BaziReading
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
        let reading = try await astrology.bazi(birth)
        let known = birth.time != nil
        let previous = try await records.profile(of: user)
        let texts = await self.texts.write(for: reading, seedParts: ["luckyday", user.uuidString.lowercased(), "profile", String((previous?.version ?? 0) + 1)])
        let pillars = reading.pillars.map { pillar in
            LuckyProfile.Pillar(role: pillar.role, meaning: pillar.meaning, stem: pillar.stem, stemHanzi: pillar.stemHanzi, branch: pillar.branch,
                                branchHanzi: pillar.branchHanzi, animal: pillar.animal, stemElement: pillar.stemElement,
                                branchElement: pillar.branchElement, polarity: pillar.polarity,
                                assumed: !known && pillar.role == "hour", poem: texts.poems[pillar.role] ?? "")
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
        guard let profile = try await records.profile(of: user) else { return .noProfile }
        let now = clock.now()
        let latest = try await records.latest(of: user)
        switch DailyCookie.breaking(latest: latest?.0, latestKey: latest?.key, key: key, now: now) {
        case .repeatAnswer(let fortune): return .repeated(fortune)
        case .locked(let opensAgainAt): return .locked(opensAgainAt: opensAgainAt)
        case .reveal: break
        }
        let zone = TimeZoneName.zone(timeZone ?? profile.timeZone) ?? .gmt
        let day = LocalDay(now, in: zone)
        let used = try await records.artisanalUsed(by: user)
        var fortune: WrittenFortune
        if let made = try await records.next(for: user, profileVersion: profile.version, day: day) {
            fortune = made
        } else {
            fortune = await writer.write(profile, day: day, poolPosition: used, budget: fortuneBudget)
        }
        let quiet = quietHours
        // A text the user already had (a model can repeat itself) gives way to the next hand-written ones.
        for offset in 0..<8 {
            let outcome = try await records.reveal(fortune, user: user, key: key, now: now, timeZone: timeZone) { readyAt, profile in
                quiet.deliveryTime(for: readyAt, in: TimeZoneName.zone(profile.timeZone) ?? .gmt)
            }
            guard case .duplicateText = outcome else { return outcome }
            fortune = writer.artisanal(profile, day: day, poolPosition: used + offset + (fortune.poolPosition == nil ? 0 : 1))
        }
        return .duplicateText
    }
}
