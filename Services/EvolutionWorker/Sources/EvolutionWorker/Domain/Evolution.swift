import Foundation
import LanternCore

/// One evolution's image job, as `evolution.requested` asked for it (Symbi Req 8.2): who, which stage, the pet's mood
/// then, the form it continues and the seed of the local drawing.
public struct EvolutionJob: Sendable, Equatable {
    public var evolutionId: UUID
    public var userId: UUID
    public var stage: Int
    /// The pet's state when it evolved (`vibrant`, `stressed`…): negative moods are drawn darker (Req 12.5).
    public var state: String
    public var previousImageKey: String?
    public var seed: String
    /// Failed attempts so far (a rate limit is not one: the provider said when to come back).
    public var attempts: Int
    /// The `evolution.requested` envelope as it came, for the dead letter (an operator replays it as it is).
    public var request: String

    public init(evolutionId: UUID, userId: UUID, stage: Int, state: String, previousImageKey: String?, seed: String, attempts: Int = 0,
                request: String) {
        self.evolutionId = evolutionId
        self.userId = userId
        self.stage = stage
        self.state = state
        self.previousImageKey = previousImageKey
        self.seed = seed
        self.attempts = attempts
        self.request = request
    }

    /// Where the image goes: one object per evolution, so a retried or doubled attempt can only overwrite its own.
    public var imageKey: String { Self.imageKey(of: evolutionId) }

    public static func imageKey(of evolution: UUID) -> String { "\(evolution.lowercased).png" }

    /// Whether `key` is an image key this worker makes (`<uuid>.png`): a request naming anything else is refused.
    public static func isImageKey(_ key: String) -> Bool {
        guard key.hasSuffix(".png"), let evolution = UUID(uuidString: String(key.dropLast(4))) else { return false }
        return imageKey(of: evolution) == key
    }
}

/// Who drew a picture: the image model, or Lantern's procedural generator (`GhostDrawing`).
public enum Generator: String, Sendable {
    case model, local
}

/// A finished picture, ready to store: always a PNG made here (the model's answer is decoded and drawn again, so no
/// byte of what it sent survives but the pixels).
public struct EvolutionImage: Sendable {
    public static let contentType = "image/png"

    public var png: [UInt8]
    public var width: Int
    public var height: Int
    public var generator: Generator

    public init(png: [UInt8], width: Int, height: Int, generator: Generator) {
        self.png = png
        self.width = width
        self.height = height
        self.generator = generator
    }
}

/// Draws an evolution: the image model (`ModelPainter`) or the local generator (`LocalPainter`).
public protocol EvolutionPainter: Sendable {
    var generator: Generator { get }
    /// - Parameter previous: the previous form's picture, for continuity (nil for the first evolution, or when it is
    ///   gone).
    func paint(_ job: EvolutionJob, previous: [UInt8]?) async throws -> EvolutionImage
}

/// A drawing that failed for now: the provider was down, slow, refused, or answered with something that is not a
/// usable picture. `retryAfter` is the provider's own wait; `rateLimited` pauses every job, not just this one.
public struct PaintingFailed: Error, CustomStringConvertible, Sendable {
    public var reason: String
    public var retryAfter: Duration?
    public var rateLimited: Bool

    public init(_ reason: String, retryAfter: Duration? = nil, rateLimited: Bool = false) {
        self.reason = reason
        self.retryAfter = retryAfter
        self.rateLimited = rateLimited
    }

    public var description: String { reason }
}

/// What became of a finished drawing when it was recorded.
public enum Recorded: Sendable, Equatable {
    /// Recorded, `symbi.evolved` on its way.
    case finished
    /// Another attempt finished it first (its lease ran out while this one drew): nothing more is sent.
    case alreadyDone
    /// The user was erased, or the job deleted, while it was drawn: the picture must go.
    case gone
}

/// evolution-worker's jobs (`JobStore`).
public protocol EvolutionJobs: Sendable {
    /// Takes up to `limit` due jobs, each out of reach of other claims for `lease` (after which a crashed worker's
    /// job comes due again).
    func claimDue(now: Date, lease: Duration, limit: Int) async throws -> [EvolutionJob]
    /// Marks the job done with its image and sends `symbi.evolved` in the same transaction.
    func finish(_ job: EvolutionJob, image: EvolutionImage, at now: Date) async throws -> Recorded
    /// Puts the job back for `due`; `failed` counts an attempt.
    func retry(_ job: EvolutionJob, due: Date, error: String, failed: Bool) async throws
    /// Gives the job up (`dead`) after its last attempt.
    func bury(_ job: EvolutionJob, error: String, at now: Date) async throws
}

/// Symbi's pictures in the shared object storage (`SYMBI_STORAGE`): health-brain serves what the worker writes.
public protocol EvolutionImageFiles: Sendable {
    func write(_ bytes: [UInt8], key: String, contentType: String) async throws
    func read(key: String) async throws -> [UInt8]?
    func delete(key: String) async throws
}
