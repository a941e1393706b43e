import ContentKit
import Foundation
import LanternCore

/// What RoastMeLater keeps, as the domain needs it (`RoastStore` implements it over `content.roasts`).
protocol RoastRecords: Sendable {
    /// The roast an earlier call with this `Idempotency-Key` made.
    func roast(idempotencyKey: String, of user: UUID) async throws -> Roast?
    func roast(_ id: UUID, of user: UUID) async throws -> Roast?
    /// What the user's reactions taught about `category` (`RoastTaste`).
    func taste(of user: UUID, category: String) async throws -> RoastTaste
    /// Counts of the user's roasts by reaction, mood and category ("Your Roast Stats").
    func stats(of user: UUID) async throws -> RoastStats
    /// Every roast of the user, oldest first (the export).
    func all(of user: UUID) async throws -> [Roast]
    /// Whether gamification granted the user `reward` (content's copy of `reward.unlocked`).
    func hasReward(_ reward: String, user: UUID) async throws -> Bool
    /// Keeps the roast and announces it (`roast.generated`) in one transaction; when another call with the same key
    /// won the race, its roast instead.
    func record(_ roast: Roast, idempotencyKey: String?) async throws -> Roast
    func page(of user: UUID, _ filter: RoastFilter) async throws -> RoastPage
    /// Sets whether the roast is a favourite (announced when it changes); nil when the user has no such roast.
    func setFavourite(_ favourite: Bool, roast: UUID, user: UUID, at date: Date) async throws -> Roast?
    /// Counts a share of the roast and announces it (`roast.shared`); nil when the user has no such roast.
    func share(_ roast: UUID, user: UUID, channel: String, template: String?, localDate: String, at date: Date) async throws -> Roast?
    /// Sets or removes the roast's reaction (announced when it changes); nil when the user has no such roast.
    func setReaction(_ reaction: RoastReaction?, roast: UUID, user: UUID, at date: Date) async throws -> Roast?
}

enum RoastOutcome: Sendable, Equatable {
    case written(Roast, refusedName: Bool)
    /// The same `Idempotency-Key` and the same order as an earlier call: its roast.
    case replayed(Roast)
    /// A premium category without the reward that unlocks it.
    case premiumLocked
    /// An `Idempotency-Key` of an earlier call that asked for something else.
    case keyReused
}

/// RoastMeLater's decisions: who may have which category, what a retried call gets, which day a roast counts for.
struct Roasting: Sendable {
    let records: any RoastRecords
    let writer: RoastWriter
    let catalogue: RoastCatalogue
    /// The whole time a roast may spend on a model before the local grammar's.
    let budget: Duration
    let clock: WallClock

    func roast(user: UUID, order: RoastOrder, idempotencyKey key: String?) async throws -> RoastOutcome {
        if let key, let earlier = try await records.roast(idempotencyKey: key, of: user) {
            return Self.sameOrder(earlier, order) ? .replayed(earlier) : .keyReused
        }
        if order.category.premium, !(try await records.hasReward(RoastCatalogue.premiumReward, user: user)) { return .premiumLocked }
        let now = clock.now()
        let id = UUID.v7(at: now)
        let taste = try await records.taste(of: user, category: order.category.id)
        let written = await writer.write(order, taste: taste, user: user, roast: id, budget: budget)
        let roast = Roast(id: id, userID: user, category: order.category.id, spice: order.spice.level, mood: order.mood?.id,
                          language: order.language, text: written.text, artisanal: written.artisanal, source: written.source,
                          localDate: Self.localDate(now, in: order.timeZone), reaction: nil, reactedAt: nil, favourite: false, createdAt: now,
                          collection: order.collection?.id, scenario: order.scenario?.id, collectionSize: order.collection?.scenarios.count)
        let stored = try await records.record(roast, idempotencyKey: key)
        guard stored.id == roast.id else { return Self.sameOrder(stored, order) ? .replayed(stored) : .keyReused }
        return .written(stored, refusedName: written.refusedName)
    }

    static func sameOrder(_ roast: Roast, _ order: RoastOrder) -> Bool {
        roast.category == order.category.id && roast.spice == order.spice.level && roast.mood == order.mood?.id && roast.language == order.language
            && roast.collection == order.collection?.id && (!order.scenarioNamed || roast.scenario == order.scenario?.id)
    }

    /// The calendar day of `date` in `zone`, `YYYY-MM-DD`.
    static func localDate(_ date: Date, in zone: TimeZone) -> String { LocalDay(date, in: zone).description }

    /// The roast's text to share, with the app's link (REQ-SHR-006).
    static func shareText(_ roast: Roast, link: String) -> String { shareText(roast.text, language: roast.language, link: link) }

    static func shareText(_ text: String, language: RoastLanguage, link: String) -> String {
        let tag = RoastNames(en: "Roasted by RoastMeLater", vi: "Được roast bởi RoastMeLater")
        return "\(text)\n\n\(tag[language]) · \(link)"
    }
}
