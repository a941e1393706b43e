import Foundation
import LanternContracts

/// What content announces about a user's cookie: the `fortune.revealed` event when one is broken, and the
/// "Your cookie is ready 🍪" push when the lock ends (English by product decision; the text is in push-worker's
/// catalogue under `PushMessage.luckydayCookieReady`).
enum CookieAnnouncements {
    static func revealed(_ fortune: Fortune, user: UUID) -> ContentEvents.FortuneRevealed {
        ContentEvents.FortuneRevealed(fortuneId: fortune.id.uuidString.lowercased(), userId: user.uuidString.lowercased(),
                                      artisanal: fortune.artisanal, revealedAt: fortune.revealedAt, opensAgainAt: fortune.opensAgainAt)
    }

    static func reminder(_ user: UUID) -> PushRequest {
        PushRequest(alert: .luckydayCookieReady, to: user.uuidString.lowercased(), collapseKey: "luckyday.cookie", ttlSeconds: 12 * 3600)
    }
}
