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

    /// A RoastMeLater roast was written for its user (what `gamification` counts: categories tried, moods, spice,
    /// roasts per local day). No text.
    public struct RoastGenerated: EventPayload, Equatable {
        public static let eventType = "roast.generated"
        public static var stream: EventStream { .events(ContentEvents.producer) }
        public var roastId: String
        public var userId: String
        /// A category id of the catalogue (`GET /v1/roasts/catalogue`), e.g. `meetings`.
        public var category: String
        /// 1–5.
        public var spice: Int
        /// A mood id, when the user gave one.
        public var mood: String?
        /// `en` or `vi`.
        public var language: String
        /// Not from a model: the local generator.
        public var artisanal: Bool
        /// The day in the user's time zone it was written on (YYYY-MM-DD).
        public var localDate: String
        public var createdAt: Date
        /// The collection it was asked in (`GET /v1/roasts/collections`), if any, with the scenario it roasted and
        /// how many scenarios the collection had: a user who has roasted every scenario has completed it (REQ-COL-008).
        public var collection: String?
        public var scenario: String?
        public var collectionSize: Int?

        public init(roastId: String, userId: String, category: String, spice: Int, mood: String?, language: String, artisanal: Bool,
                    localDate: String, createdAt: Date, collection: String? = nil, scenario: String? = nil, collectionSize: Int? = nil) {
            self.roastId = roastId
            self.userId = userId
            self.category = category
            self.spice = spice
            self.mood = mood
            self.language = language
            self.artisanal = artisanal
            self.localDate = localDate
            self.createdAt = createdAt
            self.collection = collection
            self.scenario = scenario
            self.collectionSize = collectionSize
        }
    }

    /// The user shared a roast (`POST /v1/roasts/{roastId}/share`): what gamification counts for sharing badges.
    public struct RoastShared: EventPayload, Equatable {
        public static let eventType = "roast.shared"
        public static var stream: EventStream { .events(ContentEvents.producer) }
        public var roastId: String
        public var userId: String
        public var category: String
        /// Where to: `instagram`, `facebook`, `tiktok`, `zalo`, `messages`, `copy` or `other`.
        public var channel: String
        /// The share card's template when a card was shared, else absent (the text).
        public var template: String?
        /// The day in the user's time zone it was shared on (YYYY-MM-DD).
        public var localDate: String
        public var sharedAt: Date

        public init(roastId: String, userId: String, category: String, channel: String, template: String?, localDate: String, sharedAt: Date) {
            self.roastId = roastId
            self.userId = userId
            self.category = category
            self.channel = channel
            self.template = template
            self.localDate = localDate
            self.sharedAt = sharedAt
        }
    }

    /// A roast's reaction was set, changed or removed (`reaction` nil).
    public struct RoastReacted: EventPayload, Equatable {
        public static let eventType = "roast.reacted"
        public static var stream: EventStream { .events(ContentEvents.producer) }
        public var roastId: String
        public var userId: String
        public var category: String
        /// `hilarious`, `fire`, `meh` or `dislike`; nil when removed.
        public var reaction: String?
        public var reactedAt: Date

        public init(roastId: String, userId: String, category: String, reaction: String?, reactedAt: Date) {
            self.roastId = roastId
            self.userId = userId
            self.category = category
            self.reaction = reaction
            self.reactedAt = reactedAt
        }
    }

    /// A roast was made a favourite, or stopped being one.
    public struct RoastFavourited: EventPayload, Equatable {
        public static let eventType = "roast.favourited"
        public static var stream: EventStream { .events(ContentEvents.producer) }
        public var roastId: String
        public var userId: String
        public var favourite: Bool
        public var at: Date

        public init(roastId: String, userId: String, favourite: Bool, at: Date) {
            self.roastId = roastId
            self.userId = userId
            self.favourite = favourite
            self.at = at
        }
    }
}
