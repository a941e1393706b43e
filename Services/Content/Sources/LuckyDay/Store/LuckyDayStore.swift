import Foundation

/// Lucky Day's records over the profile, fortune and schedule stores (what the domain's `LuckyDayRecords` asks).
struct LuckyDayStore: LuckyDayRecords {
    let profiles: ProfileStore
    let fortunes: FortuneStore
    let schedule: ScheduleStore

    func profile(of user: UUID) async throws -> LuckyProfile? { try await profiles.profile(of: user) }
    func save(_ profile: LuckyProfile) async throws -> LuckyProfile { try await profiles.save(profile, schedule: schedule) }
    func latest(of user: UUID) async throws -> (Fortune, key: String?)? { try await fortunes.latest(of: user) }
    func breakContext(of user: UUID) async throws -> BreakContext? { try await fortunes.breakContext(of: user) }
    func reveal(_ reveal: Reveal) async throws -> RevealWrite { try await fortunes.reveal(reveal) }
}
