import Foundation

/// A revealed fortune.
struct Fortune: Sendable, Equatable, Codable {
    var id: UUID
    var text: String
    var artisanal: Bool
    var revealedAt: Date
    var opensAgainAt: Date
}

/// The daily cookie (Req 1): closed until broken, then open with its fortune for 24 hours, then closed again.
enum DailyCookie: Sendable, Equatable {
    case closed
    case opened(Fortune)

    /// How long a revealed fortune locks the next cookie (Req 1.4).
    static let lock: TimeInterval = 24 * 3600

    /// The state at `now`, given the user's latest fortune.
    init(latest: Fortune?, now: Date) {
        if let latest, now < latest.opensAgainAt { self = .opened(latest) } else { self = .closed }
    }

    /// What breaking the cookie at `now` does: reveal a new fortune, repeat the one a retried request already got
    /// (same `Idempotency-Key`), or refuse until the lock ends.
    enum Breaking: Equatable {
        case reveal(revealedAt: Date, opensAgainAt: Date)
        case repeatAnswer(Fortune)
        case locked(opensAgainAt: Date)
    }

    static func breaking(latest: Fortune?, latestKey: String?, key: String?, now: Date) -> Breaking {
        if let latest, let key, key == latestKey { return .repeatAnswer(latest) }
        if case .opened(let fortune) = DailyCookie(latest: latest, now: now) { return .locked(opensAgainAt: fortune.opensAgainAt) }
        return .reveal(revealedAt: now, opensAgainAt: now.addingTimeInterval(lock))
    }
}
