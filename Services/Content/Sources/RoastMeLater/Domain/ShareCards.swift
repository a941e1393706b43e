import ContentKit
import Foundation
import LanternCore
import LanternRendering

/// Share cards already drawn, by roast, template, format and drawing version (`CardStore`).
protocol CardRecords: Sendable {
    func card(roast: UUID, template: String, format: String, version: Int) async throws -> Data?
    func keep(_ png: Data, roast: UUID, user: UUID, template: String, format: String, version: Int, at date: Date) async throws
}

/// Serving share cards (REQ-SHR): the user's own roast, a template they may use (premium ones with the 7-day streak
/// reward), drawn once (on the blocking pool, never an event loop) and kept for the next download.
struct ShareCards: Sendable {
    let roasts: any RoastRecords
    let cards: any CardRecords
    let catalogue: RoastCatalogue
    let link: String
    /// Drawing counts against the account's renders a minute; a card already drawn does not.
    let renders: RenderLimit
    let clock: WallClock

    enum Outcome: Sendable, Equatable {
        /// The PNG and its entity tag (the roast, template, format and drawing version: a card never changes).
        case card(Data, etag: String)
        case roastNotFound
        case premiumLocked
        /// The card would be drawn, and the account's renders of the minute are spent.
        case renderLimited(retryAfter: Int)
    }

    func card(_ roastID: UUID, user: UUID, template: RoastCatalogue.CardTemplate, format: ShareCard.Format) async throws -> Outcome {
        guard let roast = try await roasts.roast(roastID, of: user) else { return .roastNotFound }
        if template.premium, !(try await roasts.hasReward(RoastCatalogue.premiumReward, user: user)) { return .premiumLocked }
        let etag = "\"card-\(roast.id.lowercased)-\(template.id)-\(format.rawValue)-v\(ShareCard.version)\""
        if let png = try await cards.card(roast: roast.id, template: template.id, format: format.rawValue, version: ShareCard.version) {
            return .card(png, etag: etag)
        }
        guard let category = catalogue.category(roast.category) else { throw CatalogueGap(detail: "no category '\(roast.category)' in the catalogue") }
        if let retryAfter = await renders.admit(user) { return .renderLimited(retryAfter: retryAfter) }
        let content = ShareCard.Content(text: roast.text, language: roast.language, category: category, categoryName: category.names[roast.language],
                                        spice: roast.spice, link: link)
        let png = try await Renderer.run { try ShareCard.png(content, template: template.id, format: format) }
        try await cards.keep(png, roast: roast.id, user: user, template: template.id, format: format.rawValue, version: ShareCard.version, at: clock.now())
        return .card(png, etag: etag)
    }
}
