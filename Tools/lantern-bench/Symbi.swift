import ArgumentParser
import Foundation
import LanternTestSupport
import Logging
import PostgresNIO
import Synchronization

/// health-brain's work that is not one HTTP request: the purge of raw values next to a bare `DELETE` of as many rows,
/// and the day's brain for many users with a fake Gemini at its rate limit.
struct SymbiCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "symbi", abstract: "health-brain: the raw-data purge and the day's brain",
                                                    subcommands: [Purge.self, Brain.self])

    /// The same rows twice: once deleted by a bare `DELETE` of this process, once by health-brain's periodic purge —
    /// its passes' own time (`lantern_periodic_pass_duration_seconds` of `raw_metrics_purge` from its metrics, summed
    /// over every pass that ended between the rows' commit and none being left), and the wall time including the wait
    /// for the pass.
    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "health-brain's purge of raw rows next to a bare DELETE of the same rows")
        @Option(help: "PostgreSQL URL of health-brain's database") var databaseURL: String
        @Option(help: "raw rows") var rows = 1_000_000
        @Option(help: "health-brain's operations URL (its /metrics)") var metrics = "http://127.0.0.1:19086"

        func run() async throws {
            let logger = Logger(label: "bench")
            let rows = self.rows, metrics = self.metrics
            try await withPostgres(databaseURL, logger: logger) { postgres in
                try await waitFor(seconds: 60) { try await Self.count(postgres, "SELECT count(*)::int FROM pg_tables WHERE schemaname = 'health' AND tablename = 'metrics'", logger) == 1 }
                // Only this benchmark's rows (the uploads measured before are still within their day).
                try await postgres.query("TRUNCATE health.metrics", logger: logger)
                // Not yet due for the service (processed an hour ago): only the bare DELETE removes them.
                try await Self.insert(rows, processedAgo: "1 hour", postgres, logger)
                let bareStarted = ContinuousClock.now
                try await postgres.query("DELETE FROM health.metrics WHERE processed_at < now()", logger: logger)
                let bare = (ContinuousClock.now - bareStarted).inSeconds
                // Due (processed two days ago): the service's next pass removes them. On an emptied table again, so that
                // neither DELETE wades through the other's dead rows.
                try await postgres.query("TRUNCATE health.metrics", logger: logger)
                try await Self.insert(rows, processedAgo: "2 days", postgres, logger)
                // From the commit on: a pass in flight then cannot see the rows (its snapshot is older); the next takes them.
                let serviceStarted = ContinuousClock.now
                let before = try await Self.purgeSeconds(metrics)
                try await waitFor(seconds: 600) { try await Self.count(postgres, "SELECT count(*)::int FROM health.metrics", logger) == 0 }
                let wall = (ContinuousClock.now - serviceStarted).inSeconds
                try await Task.sleep(for: .milliseconds(300))  // the pass records its time as it returns
                let service = try await Self.purgeSeconds(metrics) - before
                print(String(format: "symbi.purge rows=%d bare_delete=%.2fs service_purge=%.2fs ratio=%.2f wall_with_wait=%.2fs", rows, bare, service,
                             service / bare, wall))
            }
        }

        /// The seconds health-brain's purge passes took so far.
        static func purgeSeconds(_ metrics: String) async throws -> Double {
            let (status, body) = try await call(metrics, .GET, "/metrics")
            guard status == 200 else { throw BenchError("\(metrics)/metrics answered \(status)") }
            let line = String(decoding: body, as: UTF8.self).split(separator: "\n")
                .first { $0.hasPrefix("lantern_periodic_pass_duration_seconds_sum{") && $0.contains("work=\"raw_metrics_purge\"") }
            return line.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) } ?? 0
        }

        /// Inserts the rows and commits them after a checkpoint, so that each timed DELETE starts with the insert's pages
        /// and WAL written out, not with a checkpoint falling into one of the two (one run measured the purge at 2.8× a
        /// bare DELETE that way, others at 0.6–1.8×). The checkpoint runs before the commit, while the service cannot
        /// see the rows yet.
        static func insert(_ rows: Int, processedAgo: String, _ postgres: PostgresClient, _ logger: Logger) async throws {
            try await postgres.withConnection { connection in
                try await connection.query("BEGIN", logger: logger)
                try await insert(rows, processedAgo: processedAgo, connection, logger)
                try await postgres.query("CHECKPOINT", logger: logger)
                try await connection.query("COMMIT", logger: logger)
            }
        }

        static func insert(_ rows: Int, processedAgo: String, _ postgres: PostgresConnection, _ logger: Logger) async throws {
            // Ten days of one source for rows / 10 users, in one statement (the service sees all or none of them).
            try await postgres.query(PostgresQuery(unsafeSQL: """
                INSERT INTO health.metrics (user_id, local_date, source, recorded_at, steps, sleep_hours, hrv_ms, processed_at)
                SELECT u.id, current_date - d, 'healthkit', now(), (random() * 20000)::int, 4 + random() * 6, 20 + random() * 80,
                       now() - interval '\(processedAgo)' - random() * interval '1 minute'
                FROM (SELECT gen_random_uuid() AS id FROM generate_series(1, \(rows / 10))) AS u, generate_series(0, 9) AS d
                """), logger: logger)
        }

        static func count(_ postgres: PostgresClient, _ sql: String, _ logger: Logger) async throws -> Int {
            for try await n in try await postgres.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(Int.self) { return n }
            return -1
        }
    }

    /// `users` pets whose brain run is due, each with a day to think about, appear at once; health-brain (started by
    /// the caller with this fake Gemini, whose port goes to `port-file`) works through them within the fake's rate
    /// limit. Then: every pet's day decided once (none missed, none twice), the calls the fake took and refused,
    /// and health-brain's resident memory over the run.
    struct Brain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "the day's brain for many users, a fake Gemini at its rate limit")
        @Option(help: "PostgreSQL URL of health-brain's database") var databaseURL: String
        @Option(help: "pets") var users = 100_000
        @Option(help: "requests per second the fake Gemini takes before answering 429") var rate = 1_000
        @Option(help: "file to write the fake's port to") var portFile: String
        @Option(help: "health-brain's operations URL, polled until ready") var ready: String
        @Option(help: "file holding health-brain's pid, written by the caller once started") var pidFile: String
        @Option(help: "seconds to wait for every pet") var timeout = 1_800

        func run() async throws {
            let logger = Logger(label: "bench")
            let fake = FakeLLMServers(defaultBehaviour: .ok("Calm"), ratePerSecond: rate, keepsRequests: false)
            let (users, portFile, ready, pidFile, timeout, databaseURL) = (self.users, self.portFile, self.ready, self.pidFile, self.timeout, self.databaseURL)
            try await fake.run { geminiURL, _ in
                try (geminiURL.split(separator: ":").last.map(String.init) ?? "").write(toFile: portFile, atomically: true, encoding: .utf8)
                try await waitFor(seconds: 120) { (try? await call(ready, .GET, "/health/ready").0) == 200 }
                guard let pid = Int32((try String(contentsOfFile: pidFile, encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)) else {
                    throw ValidationError("no pid in \(pidFile)")
                }
                try await withPostgres(databaseURL, logger: logger) { postgres in
                    let memory = Mutex<[Double]>([Memory.rss(pid: pid)])
                    try await postgres.query(PostgresQuery(unsafeSQL: """
                        WITH p AS (
                            INSERT INTO health.pets (user_id, zone, state_since, brain_due_at, created_at, updated_at)
                            SELECT gen_random_uuid(), 'Etc/GMT', now(), now() - random() * interval '10 minutes', now(), now()
                            FROM generate_series(1, \(users))
                            RETURNING user_id, brain_due_at
                        )
                        INSERT INTO health.days (user_id, local_date, steps, sleep, hrv, rule_state, state, source, updated_at)
                        SELECT user_id, (brain_due_at AT TIME ZONE 'UTC')::date, 'above goal', 'a little short of goal', 'below usual',
                               'active', 'resting', 'default', now()
                        FROM p
                        """), logger: logger)
                    // Only these pets (zone Etc/GMT), not the users of the HTTP benchmarks before.
                    let mine = "FROM health.days d JOIN health.pets p USING (user_id) WHERE p.zone = 'Etc/GMT'"
                    let started = ContinuousClock.now
                    // The model's calls are counted against every day it decided from here on: the pets of the HTTP
                    // benchmarks before may come due during the run too, each with one call of its own.
                    var since: Date = .distantPast
                    for try await now in try await postgres.query("SELECT now()", logger: logger).decode(Date.self) { since = now }
                    var decided = 0
                    // Resident memory at each tenth of the pets decided: flat is a plateau, not a climb with the count.
                    var tenths: [String] = []
                    while decided < users, ContinuousClock.now - started < .seconds(timeout) {
                        try await Task.sleep(for: .milliseconds(500))
                        memory.withLock { $0.append(Memory.rss(pid: pid)) }
                        if decided * 10 >= (tenths.count + 1) * users { tenths.append(String(format: "%.1f", Memory.rss(pid: pid))) }
                        decided = try await Purge.count(postgres, "SELECT count(*)::int \(mine) AND d.source <> 'default'", logger)
                    }
                    let seconds = (ContinuousClock.now - started).inSeconds
                    let claimed = try await Purge.count(postgres, "SELECT count(*)::int FROM health.pets WHERE zone = 'Etc/GMT' AND brain_day IS NOT NULL", logger)
                    let model = try await Purge.count(postgres, "SELECT count(*)::int \(mine) AND d.source = 'model'", logger)
                    let rules = try await Purge.count(postgres, "SELECT count(*)::int \(mine) AND d.source = 'rules'", logger)
                    try await Task.sleep(for: .seconds(1))  // calls still in flight when the last day was written
                    let (calls, limited) = fake.calls
                    var modelDays = 0
                    for try await n in try await postgres.query("SELECT count(*)::int FROM health.days WHERE source = 'model' AND updated_at >= \(since)",
                                                               logger: logger).decode(Int.self) { modelDays = n }
                    let others = modelDays - model
                    let rss = memory.withLock { $0 }
                    print("symbi.brain.rss_by_tenth_decided MB=" + tenths.joined(separator: ","))
                    print(String(format: "symbi.brain users=%d decided=%d claimed=%d missed=%d model=%d rules=%d calls=%d refused_429=%d other_pets=%d twice=%d seconds=%.1f per_second=%.0f rss_start=%.1fMB rss_peak=%.1fMB rss_end=%.1fMB",
                                 users, decided, claimed, users - decided, model, rules, calls, limited, others, calls - modelDays, seconds,
                                 Double(decided) / seconds, rss.first ?? .nan, rss.max() ?? .nan, rss.last ?? .nan))
                }
            }
        }
    }
}
