import Foundation
import LanternCore

/// AstroSvitla's own configuration keys (see docs/configuration.md, content).
struct AstroSvitlaConfiguration: Sendable {
    /// AstroSvitla's App Store bundle id: transactions must be signed for it; product ids are `<it>.report.<area>`.
    var bundleId: String
    /// The time a report may spend on models before the local composition (FR-031: 10 s).
    var reportBudget: Duration

    init(settings: Settings) throws {
        bundleId = settings.string("astrosvitla.bundle.id", default: "app.lantern.astrosvitla")
        reportBudget = try settings.duration("report.budget.seconds", default: 10, range: 0.1...60)
    }
}
