import Foundation

/// What `content` announces on `lantern.events.content` (docs/events.md, "content").
public enum ContentEvents {
    public static let producer = "content"

    /// A Lucky Day cookie was broken: a fortune was revealed to its user. No text: consumers count, they do not read.
    public struct FortuneRevealed: EventPayload, Equatable {
        public static let eventType = "fortune.revealed"
        public static var stream: EventStream { .events(ContentEvents.producer) }
        public var fortuneId: String
        public var userId: String
        /// Not from a model: the local generator or a hand-written fortune.
        public var artisanal: Bool
        public var revealedAt: Date
        public var opensAgainAt: Date

        public init(fortuneId: String, userId: String, artisanal: Bool, revealedAt: Date, opensAgainAt: Date) {
            self.fortuneId = fortuneId
            self.userId = userId
            self.artisanal = artisanal
            self.revealedAt = revealedAt
            self.opensAgainAt = opensAgainAt
        }
    }
}
