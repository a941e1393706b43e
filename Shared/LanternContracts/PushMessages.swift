import Foundation

/// A notification text of push-worker's catalogue (`Services/PushWorker/Sources/PushWorker/Catalogue/<language>.json`):
/// its key, the app that sends it and the `{placeholders}` its title and body fill. Producers name one of these —
/// never a string — and a push-worker test checks that each has its text, with exactly these placeholders, in every
/// language of its app (`AppID.notificationLanguages`).
public struct PushMessage: Sendable, Hashable, CustomStringConvertible {
    public let key: String
    public let app: AppID
    /// The `args` a request must carry.
    public let arguments: Set<String>

    public init(_ key: String, app: AppID, arguments: Set<String> = []) {
        self.key = key
        self.app = app
        self.arguments = arguments
    }

    public var description: String { key }
}

extension PushMessage {
    /// Pairly: paired with `partnerName` (identity).
    public static let pairlyPaired = PushMessage("pairly.paired", app: .pairly, arguments: ["partnerName"])
    /// Pairly: paired with a partner who has no name yet.
    public static let pairlyPairedUnnamed = PushMessage("pairly.paired.unnamed", app: .pairly)
    /// Pairly: a new photo from `partnerName` (media).
    public static let pairlyMomentShared = PushMessage("pairly.moment_shared", app: .pairly, arguments: ["partnerName"])
    public static let pairlyMomentSharedUnnamed = PushMessage("pairly.moment_shared.unnamed", app: .pairly)
    /// Pairly: `partnerName` ended the pairing (identity).
    public static let pairlyPartnerDisconnected = PushMessage("pairly.partner_disconnected", app: .pairly, arguments: ["partnerName"])
    public static let pairlyPartnerDisconnectedUnnamed = PushMessage("pairly.partner_disconnected.unnamed", app: .pairly)
    /// Lucky Day: the 24-hour lock is over (content).
    public static let luckydayCookieReady = PushMessage("luckyday.cookie_ready", app: .luckyday)

    /// RoastMeLater: the `streak` days in a row end at the next local midnight (gamification, REQ-STR-005).
    public static let roastmelaterStreakReminder = PushMessage("roastmelater.streak_reminder", app: .roastmelater, arguments: ["streak"])
    /// RoastMeLater: a badge earned, named in the device's language (`badge.<language>`; gamification, REQ-BDG-002).
    public static let roastmelaterBadgeEarned = PushMessage("roastmelater.badge_earned", app: .roastmelater, arguments: ["badge"])
    /// RoastMeLater: a reward unlocked, named in the device's language (gamification, REQ-STR-008/009).
    public static let roastmelaterRewardUnlocked = PushMessage("roastmelater.reward_unlocked", app: .roastmelater, arguments: ["reward"])
    /// Symbi: a new form of the pet is ready (health-brain, on the evolution worker's `symbi.evolved`, Req 8.3).
    public static let symbiEvolved = PushMessage("symbi.evolved", app: .symbi)

    /// Every message a service may send: the catalogue test walks this list.
    public static let all: [PushMessage] = [
        pairlyPaired, pairlyPairedUnnamed, pairlyMomentShared, pairlyMomentSharedUnnamed, pairlyPartnerDisconnected,
        pairlyPartnerDisconnectedUnnamed, luckydayCookieReady, roastmelaterStreakReminder, roastmelaterBadgeEarned, roastmelaterRewardUnlocked,
        symbiEvolved,
    ]
}

extension AppID {
    /// The languages an app's notifications are written in (push-worker's catalogue must have each of its messages
    /// in each): Pairly and AstroSvitla in English and Ukrainian, RoastMeLater in English and Vietnamese (spec,
    /// Appendix C.6), Lucky Day and Symbi in English (product decision).
    public var notificationLanguages: [String] {
        switch self {
        case .pairly, .astrosvitla: ["en", "uk"]
        case .roastmelater: ["en", "vi"]
        case .luckyday, .symbi: ["en"]
        }
    }
}

extension PushRequest {
    /// A visible notification of `message` for `user`'s devices of the message's app.
    /// - Parameters:
    ///   - kind: what happened (sent to the app as `kind`, used in metrics); the message's key when nil.
    public init(alert message: PushMessage, to user: String, args: [String: String] = [:], kind: String? = nil, collapseKey: String? = nil,
                ttlSeconds: Int? = nil, data: [String: String]? = nil) {
        self.init(userId: user, app: message.app, kind: kind ?? message.key, delivery: .alert, messageKey: message.key,
                  args: args.isEmpty ? nil : args, collapseKey: collapseKey, ttlSeconds: ttlSeconds, data: data)
    }
}
