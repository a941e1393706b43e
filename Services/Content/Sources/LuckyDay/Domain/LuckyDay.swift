import ContentKit
import Foundation
import LanternContracts
import LanternCore

/// What breaking the cookie came to.
enum RevealOutcome: Sendable {
    case revealed(Fortune)
    /// A retry with the same `Idempotency-Key`: the fortune it already got.
    case repeated(Fortune)
    case locked(opensAgainAt: Date)
    case noProfile
    /// Every text offered had been given to the user before.
    case duplicateText
    /// The `Idempotency-Key` belongs to an earlier cookie.
    case keyReused
}

/// Everything a break decides on, read at once: what the profile row says and the fortune made ahead.
struct BreakContext: Sendable {
    /// The profile's version: a fortune made ahead for another version is not revealed.
    var profileVersion: Int
    var timeZone: String
    /// Hand-written fortunes the user has had: their position in the pool.
    var artisanalUsed: Int
    var latest: (fortune: Fortune, key: String?)?
    /// The fortune made ahead, with the profile version and local date it was made for.
    var next: (fortune: WrittenFortune, profileVersion: Int, day: LocalDay)?
}

/// A reveal as the domain decided it, every value computed: the store writes it in one statement, and only if the
/// profile row still holds what the decision read (`expectedVersion`, `expectedLatest`).
struct Reveal: Sendable {
    var user: UUID
    var fortune: Fortune
    var source: String
    var key: String?
    /// Hand-written fortunes had after this one (their position in the pool; a model's text leaves it).
    var artisanalUsed: Int
    /// The zone the profile keeps from now on (the request's, else the profile's).
    var timeZone: String
    /// When the next fortune is made ahead, and when the "cookie ready" reminder goes out.
    var makeNextAt: Date
    var remindAt: Date
    var expectedVersion: Int
    var expectedLatest: UUID?
}

/// What the store did with a `Reveal`.
enum RevealWrite: Sendable, Equatable {
    case revealed
    /// Another write of the profile came first (a parallel break, an edit, an erasure): read and decide again.
    case changed
    /// The user was given this text before (a model can repeat itself).
    case duplicateText
    /// The `Idempotency-Key` was used for an earlier cookie.
    case keyReused
}

/// Where Lucky Day's state lives (the stores implement it).
protocol LuckyDayRecords: Sendable {
    func profile(of user: UUID) async throws -> LuckyProfile?
    func save(_ profile: LuckyProfile) async throws -> LuckyProfile
    func latest(of user: UUID) async throws -> (Fortune, key: String?)?
    func breakContext(of user: UUID) async throws -> BreakContext?
    /// Writes the fortune, its event, the next pre-generation and the reminder together, if the profile row is as
    /// `reveal` expects.
    func reveal(_ reveal: Reveal) async throws -> RevealWrite
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
        if let previous, previous.isMade(from: reading, birthTimeKnown: known, timeZone: timeZone) { return previous }
        let texts = await self.texts.write(for: reading, seedParts: ["luckyday", user.uuidString.lowercased(), "profile", String((previous?.version ?? 0) + 1)],
                                           account: user.uuidString.lowercased())
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

    /// Breaks the cookie (Req 1, 2): decided once on one read — repeat a retried request's answer, refuse while
    /// the cookie is open, else reveal the fortune made ahead for today or one written within the budget — and
    /// written in one statement that holds only if nothing changed meanwhile. Of parallel breaks one reveals; the
    /// others read again and find the cookie open.
    ///
    /// - Parameter openedAt: when the cookie was opened, for one opened offline (Req 7.3–7.4: the app showed a stored
    ///   fortune and records the break once it is online); the lock runs from then, and the day is that moment's.
    ///   The route has checked it is within the last 24 hours.
    func breakCookie(user: UUID, key: String?, timeZone: String?, openedAt: Date? = nil) async throws -> RevealOutcome {
        let started = clock.now()
        var profile: LuckyProfile?
        return try await ConcurrentChanges.retrying("cookie") { () -> RevealOutcome? in
            guard let context = try await records.breakContext(of: user) else { return .noProfile }
            let now = clock.now()
            let opened = min(openedAt ?? now, now)
            let (revealedAt, opensAgainAt): (Date, Date)
            switch DailyCookie.breaking(latest: context.latest?.fortune, latestKey: context.latest?.key, key: key, now: opened) {
            case .repeatAnswer(let fortune): return .repeated(fortune)
            case .locked(let opensAgainAt): return .locked(opensAgainAt: opensAgainAt)
            case .reveal(let at, let until): (revealedAt, opensAgainAt) = (at, until)
            }
            // A cookie opened offline must not end before the one broken since (a break made meanwhile wins).
            if let latest = context.latest?.fortune, latest.revealedAt > opened { return .locked(opensAgainAt: latest.opensAgainAt) }
            let zone = timeZone ?? context.timeZone
            let day = LocalDay(opened, in: TimeZoneName.zone(zone) ?? .gmt)
            var fortune: WrittenFortune
            if let next = context.next, next.profileVersion == context.profileVersion, next.day == day {
                fortune = next.fortune
            } else {
                guard let current = try await records.profile(of: user) else { return .noProfile }
                profile = current
                // The budget counts from the request's arrival and keeps back what storing the fortune takes.
                let budget = fortuneBudget - Self.storingReserve - .milliseconds(Int64(max(0, clock.now().timeIntervalSince(started)) * 1000))
                fortune = await writer.write(current, day: day, poolPosition: context.artisanalUsed, budget: budget)
            }
            // A text the user already had gives way to their next hand-written ones.
            for offset in 0..<Self.duplicateRetries {
                let reveal = Reveal(
                    user: user,
                    fortune: Fortune(id: UUID.v7(at: now), text: fortune.text, artisanal: fortune.artisanal,
                                     revealedAt: revealedAt, opensAgainAt: opensAgainAt),
                    source: fortune.source, key: key,
                    artisanalUsed: fortune.poolPosition.map { max(context.artisanalUsed, $0 + 1) } ?? context.artisanalUsed, timeZone: zone,
                    makeNextAt: max(now, opensAgainAt.addingTimeInterval(-Self.makeAheadBy)),
                    remindAt: quietHours.deliveryTime(for: opensAgainAt, in: TimeZoneName.zone(zone) ?? .gmt),
                    expectedVersion: context.profileVersion, expectedLatest: context.latest?.fortune.id)
                switch try await records.reveal(reveal) {
                case .revealed: return .revealed(reveal.fortune)
                case .changed: return nil
                case .keyReused: return .keyReused
                case .duplicateText:
                    if profile?.version != context.profileVersion {
                        guard let current = try await records.profile(of: user) else { return .noProfile }
                        profile = current
                    }
                    guard let profile else { return .noProfile }
                    fortune = writer.artisanal(profile, day: day, poolPosition: context.artisanalUsed + offset + (fortune.poolPosition == nil ? 0 : 1))
                }
            }
            return .duplicateText
        }
    }

    /// Texts a break tries when the user had the one offered (each is the next hand-written fortune).
    static let duplicateRetries = 8

    /// Time a live break keeps back from its budget for storing the fortune (a transaction under load).
    static let storingReserve: Duration = .milliseconds(300)

    /// The next fortune is made this long before the next cookie opens: late enough to stay off the path of the
    /// day's live breaks, early enough to be ready (a model gets `PREGENERATION_BUDGET_SECONDS`).
    static let makeAheadBy: TimeInterval = 3600
}
