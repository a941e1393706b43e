import Foundation
import LanternCore

/// Lucky Day's own configuration keys (see docs/configuration.md, content).
struct LuckyDayConfiguration: Sendable {
    /// The whole time a live break may spend on a model before the hand-written fortune (Req 2.5: 5 s).
    var fortuneBudget: Duration
    /// A profile's texts (nickname, poems, essence).
    var profileBudget: Duration
    /// A fortune made ahead of time, with nobody waiting.
    var pregenerationBudget: Duration
    /// Local hours in which no "cookie ready" reminder is sent (it waits for their end).
    var quietHours: QuietHours

    init(settings: Settings) throws {
        fortuneBudget = try settings.duration("fortune.budget.seconds", default: 5, range: 0.1...60)
        profileBudget = try settings.duration("profile.budget.seconds", default: 8, range: 0.1...60)
        pregenerationBudget = try settings.duration("pregeneration.budget.seconds", default: 30, range: 0.1...300)
        let quiet = settings.string("luckyday.quiet.hours", default: "22:00-08:00")
        guard let hours = QuietHours(quiet) else {
            throw ConfigurationError(variable: "LUCKYDAY_QUIET_HOURS", message: "must be HH:MM-HH:MM (local time), got '\(quiet)'")
        }
        quietHours = hours
    }
}
