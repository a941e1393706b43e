import Foundation
import LanternCore

/// RoastMeLater's own configuration keys (see docs/configuration.md, content).
struct RoastMeLaterConfiguration: Sendable {
    /// The whole time a roast may spend on a model before the local grammar's.
    var roastBudget: Duration
    /// The app's link in a roast's share text (REQ-SHR-006).
    var shareLink: String

    init(settings: Settings) throws {
        roastBudget = try settings.duration("roast.budget.seconds", default: 5, range: 0.1...60)
        shareLink = settings.string("roastmelater.share.url", default: "https://roastmelater.app")
        guard let url = URL(string: shareLink), url.scheme == "https" || url.scheme == "http", url.host != nil else {
            throw ConfigurationError(variable: "ROASTMELATER_SHARE_URL", message: "must be an http(s) URL, got '\(shareLink)'")
        }
    }
}
