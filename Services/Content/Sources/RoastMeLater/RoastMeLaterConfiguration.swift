import Foundation
import LanternCore
import LanternTokens

/// RoastMeLater's own configuration keys (see docs/configuration.md, content).
struct RoastMeLaterConfiguration: Sendable {
    /// The whole time a roast may spend on a model before the local grammar's.
    var roastBudget: Duration
    /// The time a roast of the day, made ahead with no one waiting, may spend on a model.
    var dailyBudget: Duration
    /// The app's link in a roast's share text (REQ-SHR-006).
    var shareLink: String
    /// Who may use the operator API (`name:secret`, comma-separated; none configured: every call is 401).
    var operatorKeys: OperatorKeys

    init(settings: Settings) throws {
        roastBudget = try settings.duration("roast.budget.seconds", default: 5, range: 0.1...60)
        dailyBudget = try settings.duration("roast.of.the.day.budget.seconds", default: 30, range: 0.1...300)
        operatorKeys = try OperatorKeys(try settings.secretList("roastmelater.operator.keys"), variable: "ROASTMELATER_OPERATOR_KEYS")
        shareLink = settings.string("roastmelater.share.url", default: "https://roastmelater.app")
        guard let url = URL(string: shareLink), url.scheme == "https" || url.scheme == "http", url.host != nil else {
            throw ConfigurationError(variable: "ROASTMELATER_SHARE_URL", message: "must be an http(s) URL, got '\(shareLink)'")
        }
    }
}
