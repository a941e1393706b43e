import Foundation
import LanternCore
import Logging
import Synchronization

/// Runs evolution jobs: draws each, stores the picture, records it (which tells health-brain), and decides what a
/// failure means (Req 8.2, 14.5).
///
/// - A failed drawing comes back after `policy`'s backoff, never before the provider's own wait; after
///   `policy.maxAttempts` failures the job is dead-lettered with the last reason.
/// - A rate limit (429) is not the job's failure: every job pauses until the provider's `retryDelay` has passed
///   (one answer says the whole key is over its quota), and the job keeps its attempts.
/// - A picture whose user was erased while it was drawn is deleted again: erasure wins every race.
public struct EvolutionStudio: Sendable {
    let jobs: any EvolutionJobs
    let files: any EvolutionImageFiles
    let painter: any EvolutionPainter
    let policy: RetryPolicy
    let clock: WallClock
    let lease: Duration
    /// Gives a job up: the job's `dead` row and its dead letter.
    let deadLetter: @Sendable (EvolutionJob, String) async throws -> Void
    let logger: Logger
    private let pause = Pause()

    public init(jobs: any EvolutionJobs, files: any EvolutionImageFiles, painter: any EvolutionPainter, policy: RetryPolicy, clock: WallClock,
                lease: Duration, logger: Logger, deadLetter: @escaping @Sendable (EvolutionJob, String) async throws -> Void) {
        self.jobs = jobs
        self.files = files
        self.painter = painter
        self.policy = policy
        self.clock = clock
        self.lease = lease
        self.deadLetter = deadLetter
        self.logger = logger
    }

    /// One pass: up to `limit` due jobs drawn at once; returns how many it took (a full pass is followed by another).
    @discardableResult
    public func runDue(limit: Int) async throws -> Int {
        let now = clock.now()
        if let until = pause.until, until > now { return 0 }
        let due = try await jobs.claimDue(now: now, lease: lease, limit: limit)
        await withTaskGroup(of: Void.self) { group in
            for job in due { group.addTask { await run(job) } }
        }
        return due.count
    }

    /// One attempt at one job; every outcome is written down before it returns (or the lease brings the job back).
    func run(_ job: EvolutionJob) async {
        var log = logger
        log[metadataKey: "evolution"] = "\(job.evolutionId.lowercased)"
        do {
            let previous: [UInt8]? = painter.generator == .model ? try await previousPicture(job) : nil
            let image = try await painter.paint(job, previous: previous)
            try await files.write(image.png, key: job.imageKey, contentType: EvolutionImage.contentType)
            switch try await jobs.finish(job, image: image, at: clock.now()) {
            case .finished:
                log.info("evolution drawn", metadata: ["stage": "\(job.stage)", "generator": "\(image.generator.rawValue)", "attempt": "\(job.attempts + 1)"])
            case .alreadyDone:
                log.info("evolution already drawn by another attempt")
            case .gone:
                // Erased while drawing: the deletion may have run before this write, so this attempt removes it.
                try await files.delete(key: job.imageKey)
                log.info("evolution of an erased user: its picture is deleted")
            }
        } catch let failure as PaintingFailed where failure.rateLimited {
            let wait = max(failure.retryAfter ?? policy.retryBase, .seconds(1))
            let until = clock.now().addingTimeInterval(wait.inSeconds)
            pause.extend(to: until)
            log.warning("image model rate-limited: every job waits", metadata: ["retryIn": "\(wait)", "reason": "\(failure.reason)"])
            await record { try await jobs.retry(job, due: until, error: failure.reason, failed: false) }
        } catch {
            await failed(job, reason: (error as? PaintingFailed)?.reason ?? "\(error)", retryAfter: (error as? PaintingFailed)?.retryAfter, log: log)
        }
    }

    private func failed(_ job: EvolutionJob, reason: String, retryAfter: Duration?, log: Logger) async {
        let attempt = job.attempts + 1
        if attempt >= policy.maxAttempts {
            log.error("evolution given up: dead-lettered", metadata: ["attempts": "\(attempt)", "reason": "\(reason)"])
            await record {
                try await jobs.bury(job, error: reason, at: clock.now())
                try await deadLetter(EvolutionJob(evolutionId: job.evolutionId, userId: job.userId, stage: job.stage, state: job.state,
                                                  previousImageKey: job.previousImageKey, seed: job.seed, attempts: attempt, request: job.request),
                                     reason)
            }
        } else {
            let wait = policy.delay(after: attempt, retryAfter: retryAfter)
            log.warning("evolution drawing failed: retried", metadata: ["attempt": "\(attempt)", "retryIn": "\(wait)", "reason": "\(reason)"])
            await record { try await jobs.retry(job, due: clock.now().addingTimeInterval(wait.inSeconds), error: reason, failed: true) }
        }
    }

    /// The previous form's picture, for the model to continue from; a missing one is not an error (drawn afresh).
    private func previousPicture(_ job: EvolutionJob) async throws -> [UInt8]? {
        guard let key = job.previousImageKey else { return nil }
        return try await files.read(key: key)
    }

    /// Writes an outcome down; if even that fails (the database is away), the lease brings the job back.
    private func record(_ write: () async throws -> Void) async {
        do { try await write() } catch { logger.warning("evolution outcome not recorded: the job comes back after its lease", metadata: ["error": "\(error)"]) }
    }

    /// Until when every job waits (a rate limit), shared by this process's passes.
    final class Pause: Sendable {
        private let value = Mutex<Date?>(nil)
        var until: Date? { value.withLock { $0 } }
        func extend(to date: Date) { value.withLock { $0 = max($0 ?? date, date) } }
    }
}
