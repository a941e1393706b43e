import Foundation

/// Lucky Day's records over the profile, fortune and schedule stores (what the domain's `LuckyDayRecords` asks).
struct LuckyDayStore: LuckyDayRecords {
    let profiles: ProfileStore
    let fortunes: FortuneStore
    let schedule: ScheduleStore

    func profile(of user: UUID) async throws -> LuckyProfile? { try await profiles.profile(of: user) }
    func save(_ profile: LuckyProfile) async throws -> LuckyProfile { try await profiles.save(profile, schedule: schedule) }
    func latest(of user: UUID) async throws -> (Fortune, key: String?)? { try await fortunes.latest(of: user) }
    func next(for user: UUID, profileVersion: Int, day: LocalDay) async throws -> WrittenFortune? {
        try await fortunes.next(for: user, profileVersion: profileVersion, day: day)
    }
    func artisanalUsed(by user: UUID) async throws -> Int { try await profiles.artisanalUsed(by: user) }
    func reveal(_ fortune: WrittenFortune, user: UUID, key: String?, now: Date, timeZone: String?,
                reminderAt: @Sendable (Date, LuckyProfile) -> Date) async throws -> RevealOutcome {
        try await fortunes.reveal(fortune, user: user, key: key, now: now, timeZone: timeZone, reminderAt: reminderAt)
    }
}
