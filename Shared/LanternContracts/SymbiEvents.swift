import Foundation

/// What Symbi's services say to each other (docs/events.md, "health-brain" and "evolution-worker"): the pet earned an
/// evolution, its image is wanted, its image is ready. Health values never travel: an evolution names the user,
/// the stage and the pet's mood, nothing measured.
public enum SymbiEvents {
    public static let producer = "health-brain"
    public static let workerProducer = "evolution-worker"

    /// The pet reached a cumulative 30 days (60, 90…) in Active or Vibrant (Req 8.1): `stage` is the form it evolves
    /// into (1 for the first evolution). Once per stage and user, whatever the redeliveries.
    public struct EvolutionTriggered: EventPayload, Equatable {
        public static let eventType = "symbi.evolution_triggered"
        public static var stream: EventStream { .events(SymbiEvents.producer) }
        public var evolutionId: String
        public var userId: String
        public var stage: Int
        /// Active or Vibrant days counted so far (30 × `stage`).
        public var activeDays: Int
        public var triggeredAt: Date

        public init(evolutionId: String, userId: String, stage: Int, activeDays: Int, triggeredAt: Date) {
            self.evolutionId = evolutionId
            self.userId = userId
            self.stage = stage
            self.activeDays = activeDays
            self.triggeredAt = triggeredAt
        }
    }

    /// The image job of an evolution, for `evolution-worker` on `lantern.jobs.evolution` (Req 8.2, 14.5: a job
    /// waits in the stream while the image model is down). Idempotent by `evolutionId`.
    public struct EvolutionRequested: EventPayload, Equatable {
        public static let eventType = "evolution.requested"
        public static var stream: EventStream { .jobs("evolution") }
        public var evolutionId: String
        public var userId: String
        public var stage: Int
        /// The pet's mood when it evolved (`vibrant`, `active`…): negative moods are drawn darker (Req 12.5).
        public var state: String
        /// The evolution the new form continues (its image is the model's input image), nil for the first.
        public var previousEvolutionId: String?
        /// The object key of the previous form's image, nil for the first.
        public var previousImageKey: String?
        /// Seed of the local procedural generator: the same job draws the same ghost.
        public var seed: String

        public init(evolutionId: String, userId: String, stage: Int, state: String, previousEvolutionId: String?, previousImageKey: String?,
                    seed: String) {
            self.evolutionId = evolutionId
            self.userId = userId
            self.stage = stage
            self.state = state
            self.previousEvolutionId = previousEvolutionId
            self.previousImageKey = previousImageKey
            self.seed = seed
        }
    }

    /// An evolution's image is stored (by `evolution-worker`): `health-brain` records the form, makes it the
    /// current one and tells the app (frame and push).
    public struct Evolved: EventPayload, Equatable {
        public static let eventType = "symbi.evolved"
        public static var stream: EventStream { .events(SymbiEvents.workerProducer) }
        public var evolutionId: String
        public var userId: String
        public var stage: Int
        /// Where the image is in the shared object storage.
        public var imageKey: String
        public var contentType: String
        public var width: Int
        public var height: Int
        /// `model` (the image model drew it) or `local` (Lantern's procedural generator).
        public var generator: String
        public var evolvedAt: Date

        public init(evolutionId: String, userId: String, stage: Int, imageKey: String, contentType: String, width: Int, height: Int,
                    generator: String, evolvedAt: Date) {
            self.evolutionId = evolutionId
            self.userId = userId
            self.stage = stage
            self.imageKey = imageKey
            self.contentType = contentType
            self.width = width
            self.height = height
            self.generator = generator
            self.evolvedAt = evolvedAt
        }
    }
}

/// Symbi's real-time frames: the pet's state changed (`symbi_state`), it evolved (`symbi_evolved`).
public enum SymbiFrames {
    /// The state `GET /v1/symbi/state` answers, sent when it changes (an upload, the day's brain, a calm session).
    public struct State: RealtimeFrameBody {
        public static var app: AppID { .symbi }
        public static var type: String { "symbi_state" }
        public var state: String
        /// `default`, `rules`, `model`, `local` or `session` (docs: Services/HealthBrain/README.md).
        public var source: String
        /// The local day the state is about.
        public var localDate: String?
        public var since: Date
        /// The state's version, one more at each change: a frame older than the state the app holds is ignored.
        public var version: Int
        public var stage: Int
        public var activeDays: Int

        public init(state: String, source: String, localDate: String?, since: Date, version: Int, stage: Int, activeDays: Int) {
            self.state = state
            self.source = source
            self.localDate = localDate
            self.since = since
            self.version = version
            self.stage = stage
            self.activeDays = activeDays
        }
    }

    /// A new form is ready: the app fetches the gallery (`GET /v1/symbi/evolutions`).
    public struct Evolved: RealtimeFrameBody {
        public static var app: AppID { .symbi }
        public static var type: String { "symbi_evolved" }
        public var evolutionId: String
        public var stage: Int

        public init(evolutionId: String, stage: Int) {
            self.evolutionId = evolutionId
            self.stage = stage
        }
    }
}
