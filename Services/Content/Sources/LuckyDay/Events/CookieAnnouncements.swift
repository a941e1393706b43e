import Foundation
import LanternContracts

/// What content announces about a user's cookie: the `fortune.revealed` event when one is broken, and the
/// "Your cookie is ready 🍪" push when the lock ends (English by product decision; the text is in push-worker's
/// catalogue under `luckyday.cookie_ready`).
enum CookieAnnouncements {
    static let reminderKey = "luckyday.cookie_ready"

    static func revealed(_ fortune: Fortune, user: UUID) -> ContentEvents.FortuneRevealed {
        ContentEvents.FortuneRevealed(fortuneId: fortune.id.uuidString.lowercased(), userId: user.uuidString.lowercased(),
                                      artisanal: fortune.artisanal, revealedAt: fortune.revealedAt, opensAgainAt: fortune.opensAgainAt)
    }

    static func reminder(_ user: UUID) -> PushRequest {
        PushRequest(userId: user.uuidString.lowercased(), app: AppID.luckyday.rawValue, kind: reminderKey, delivery: .alert,
                    messageKey: reminderKey, collapseKey: "luckyday.cookie", ttlSeconds: 12 * 3600)
    }
}
