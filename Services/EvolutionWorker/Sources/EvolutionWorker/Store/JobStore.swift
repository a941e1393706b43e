import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import Logging
import PostgresNIO

/// evolution-worker's jobs (`evolution.jobs`): one row per evolution, which is also the queue of its attempts.
/// `symbi.evolved` is written to the outbox in the transaction that marks the job done, so health-brain hears of
/// every stored picture exactly once.
struct JobStore: EvolutionJobs {
    static let schema = "evolution"

    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger

    static let housekeeping: [Housekeeping.Rule] = [
        // A finished or dead job's row is only its idempotency from then on: a redelivery weeks later is not a thing.
        Housekeeping.Rule("finished_jobs", sql: "DELETE FROM evolution.jobs WHERE status <> 'pending' AND finished_at < $1", keep: 30 * 86_400),
        .processedEvents(schema: schema),
    ]

    /// Records a requested job, due now. A redelivered request finds its row and changes nothing, unless the job was
    /// dead-lettered: an operator's replay of the dead letter makes it pending again, its attempts reset. Nothing is
    /// recorded for an erased user (the erasure fence, `ErasedUsers`).
    @discardableResult
    func enqueue(_ request: SymbiEvents.EvolutionRequested, evolution: UUID, user: UUID, envelope: String, at now: Date) async throws -> Bool {
        do {
            return try await client.transaction(admitting: user, schema: Self.schema, logger: logger) { connection in
                try await insert(request, evolution: evolution, user: user, envelope: envelope, at: now, on: connection)
            }
        } catch is AccountErased {
            return false
        }
    }

    private func insert(_ request: SymbiEvents.EvolutionRequested, evolution: UUID, user: UUID, envelope: String, at now: Date,
                        on connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.query("""
            INSERT INTO evolution.jobs AS j (evolution_id, user_id, stage, state, previous_image_key, seed, due_at, request, requested_at)
            VALUES (\(evolution), \(user), \(request.stage), \(request.state), \(request.previousImageKey), \(request.seed), \(now), \(envelope), \(now))
            ON CONFLICT (evolution_id) DO UPDATE SET status = 'pending', attempts = 0, due_at = EXCLUDED.due_at, last_error = NULL,
                finished_at = NULL
            WHERE j.status = 'dead'
            RETURNING 1
            """, logger: logger)
        for try await _ in rows.decode(Int.self) { return true }
        return false
    }

    func claimDue(now: Date, lease: Duration, limit: Int) async throws -> [EvolutionJob] {
        let rows = try await client.query("""
            UPDATE evolution.jobs j SET due_at = \(now.addingTimeInterval(lease.inSeconds))
            WHERE j.evolution_id = ANY(ARRAY(SELECT evolution_id FROM evolution.jobs WHERE status = 'pending' AND due_at <= \(now)
                                             ORDER BY due_at LIMIT \(limit) FOR UPDATE SKIP LOCKED))
            RETURNING j.evolution_id, j.user_id, j.stage, j.state, j.previous_image_key, j.seed, j.attempts, j.request
            """, logger: logger)
        var jobs: [EvolutionJob] = []
        for try await (evolution, user, stage, state, previous, seed, attempts, request)
            in rows.decode((UUID, UUID, Int, String, String?, String, Int, String).self) {
            jobs.append(EvolutionJob(evolutionId: evolution, userId: user, stage: stage, state: state, previousImageKey: previous, seed: seed,
                                     attempts: attempts, request: request))
        }
        return jobs
    }

    func finish(_ job: EvolutionJob, image: EvolutionImage, at now: Date) async throws -> Recorded {
        let recorded = try await client.transaction(logger: logger) { connection -> Recorded in
            if try await ErasedUsers.contains(job.userId, schema: Self.schema, on: connection, logger: logger) { return .gone }
            let rows = try await connection.query("""
                UPDATE evolution.jobs SET status = 'done', image_key = \(job.imageKey), generator = \(image.generator.rawValue), finished_at = \(now),
                    last_error = NULL
                WHERE evolution_id = \(job.evolutionId) AND status <> 'done'
                RETURNING 1
                """, logger: logger)
            var updated = false
            for try await _ in rows.decode(Int.self) { updated = true }
            guard updated else {
                let exists = try await connection.query("SELECT 1 FROM evolution.jobs WHERE evolution_id = \(job.evolutionId)", logger: logger)
                for try await _ in exists.decode(Int.self) { return .alreadyDone }
                return .gone
            }
            let subject = job.userId.lowercased
            try await outbox.enqueue(SymbiEvents.Evolved(evolutionId: job.evolutionId.lowercased, userId: subject, stage: job.stage, imageKey: job.imageKey,
                                                         contentType: EvolutionImage.contentType, width: image.width, height: image.height,
                                                         generator: image.generator.rawValue, evolvedAt: now),
                                     subject: subject, at: now, on: connection, logger: logger)
            return .finished
        }
        if recorded == .finished { outbox.committed() }
        return recorded
    }

    func retry(_ job: EvolutionJob, due: Date, error: String, failed: Bool) async throws {
        try await client.query("""
            UPDATE evolution.jobs SET due_at = \(due), last_error = \(String(error.prefix(500))), attempts = attempts + \(failed ? 1 : 0)
            WHERE evolution_id = \(job.evolutionId) AND status = 'pending'
            """, logger: logger)
    }

    func bury(_ job: EvolutionJob, error: String, at now: Date) async throws {
        try await client.query("""
            UPDATE evolution.jobs SET status = 'dead', attempts = attempts + 1, last_error = \(String(error.prefix(500))), finished_at = \(now)
            WHERE evolution_id = \(job.evolutionId) AND status = 'pending'
            """, logger: logger)
    }

    /// Forgets the user's jobs and remembers the erasure (in the caller's transaction); returns the keys of every
    /// picture they may have, drawn or being drawn, for the caller to delete once this commits.
    func erase(_ user: UUID, at now: Date, on connection: PostgresConnection) async throws -> [String] {
        try await ErasedUsers.record(user, at: now, schema: Self.schema, on: connection, logger: logger)
        let rows = try await connection.query("DELETE FROM evolution.jobs WHERE user_id = \(user) RETURNING evolution_id", logger: logger)
        var keys: [String] = []
        for try await evolution in rows.decode(UUID.self) { keys.append(EvolutionJob.imageKey(of: evolution)) }
        return keys
    }

    /// How many jobs are in each status (the operations gauge and the benchmark).
    func counts() async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for try await (status, count) in try await client.query("SELECT status, count(*)::int FROM evolution.jobs GROUP BY status", logger: logger)
            .decode((String, Int).self) {
            counts[status] = count
        }
        return counts
    }
}
