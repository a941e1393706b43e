import Foundation
import LanternCore
import LanternDatabase
import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle

/// Work a process repeats on a timer: made-ahead texts, reminders, retries, purges, gauges. Every loop of the
/// platform and of the services is one of these, run by `ServiceBuilder.addPeriodic`, so they all sleep, drain,
/// share out across replicas, stop and report the same way.
///
/// A *pass* does a bounded amount of work and returns how many items it handled. After it the runner sleeps
/// `interval` (± `jitter`, so replicas started together drift apart) — unless `batch` is set and the pass handled a
/// whole batch: more is waiting, so it goes again at once (drain until a short pass).
///
/// Work that must run on one replica at a time (a daily model call per user, a purge) sets `lease`: before each pass
/// the runner takes the row `name` of the schema's `periodic_leases` until `now + max(interval, lease)`, by the
/// service's clock; a replica that finds it held by another skips the pass. Work that shares itself out row by row
/// (`FOR UPDATE SKIP LOCKED` with a lease column) needs none.
///
/// Shutdown has one path: a graceful shutdown ends the sleep at once and starts no new pass; a pass in flight gets
/// `stopGrace` to finish and is then cancelled (its leased rows come back when their lease ends). A pass that throws
/// is logged and counted, never ends the process: the next one comes after the interval.
public struct PeriodicWork: Sendable {
    public typealias Pass = @Sendable () async throws -> Int

    /// The metric label and the lease's name: `snake_case`, unique in the service.
    public var name: String
    public var interval: Duration
    /// A fraction of `interval` (0…0.5) added or taken at random from each sleep.
    public var jitter: Double
    /// Set: a pass that handled `batch` items or more is followed by another at once.
    public var batch: Int?
    /// Set: one replica at a time, holding the lease for at least this long from the start of each pass.
    public var lease: Duration?
    /// The first pass only after one interval (hourly clean-ups keep start-up quick); otherwise at once.
    public var startAfterInterval: Bool
    public var stopGrace: Duration
    public var pass: Pass

    public init(_ name: String, every interval: Duration, jitter: Double = 0.1, batch: Int? = nil, lease: Duration? = nil,
                startAfterInterval: Bool = false, stopGrace: Duration = .seconds(5), pass: @escaping Pass) {
        precondition(!name.isEmpty && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }, "periodic work names are snake_case")
        self.name = name
        self.interval = interval
        self.jitter = min(max(jitter, 0), 0.5)
        self.batch = batch
        self.lease = lease
        self.startAfterInterval = startAfterInterval
        self.stopGrace = stopGrace
        self.pass = pass
    }

    /// The next sleep: `interval` ± `jitter`.
    func nextDelay() -> Duration {
        guard jitter > 0 else { return interval }
        return interval * (1 + Double.random(in: -jitter...jitter))
    }
}

/// The table of `PeriodicWork.lease`, in the schema of each service that has leased work.
public enum PeriodicMigrations {
    public static let all: [Migration] = [
        Migration(id: "0000_lantern_periodic", sql: """
            -- One row per leased periodic work: which replica runs it until when (ServiceBuilder.addPeriodic).
            CREATE TABLE {{schema}}.periodic_leases (
                name   text PRIMARY KEY,
                holder text NOT NULL,
                until  timestamptz NOT NULL
            );
            """),
    ]
}

/// Takes and keeps `PeriodicWork` leases in `<schema>.periodic_leases`.
public struct PeriodicLeases: Sendable {
    let client: PostgresClient
    let schema: String
    let clock: WallClock
    let logger: Logger
    /// This runner: host, process and a random part (tests run several "replicas" in one process).
    public let holder: String

    public init(client: PostgresClient, schema: String, clock: WallClock, logger: Logger,
                holder: String = "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))") {
        self.client = client
        self.schema = schema
        self.clock = clock
        self.logger = logger
        self.holder = holder
    }

    /// Takes or renews the lease `name` until `for` from now; false when another holder's lease has not ended.
    public func take(_ name: String, for duration: Duration) async throws -> Bool {
        let now = clock.now()
        let until = now.addingTimeInterval(duration.inSeconds)
        let rows = try await client.query("""
            INSERT INTO \(unescaped: schema).periodic_leases AS l (name, holder, until) VALUES (\(name), \(holder), \(until))
            ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, until = EXCLUDED.until
            WHERE l.until <= \(now) OR l.holder = EXCLUDED.holder
            RETURNING 1
            """, logger: logger)
        for try await _ in rows { return true }
        return false
    }
}

/// Runs one `PeriodicWork` for the life of the process.
struct PeriodicRunner: Service {
    let work: PeriodicWork
    let leases: PeriodicLeases?
    let logger: Logger

    func run() async {
        var delay = work.startAfterInterval ? work.nextDelay() : .zero
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            if delay > .zero {
                // Ends at once on a graceful shutdown (the sleep is cancelled).
                await cancelWhenGracefulShutdown { [delay] in try? await Task.sleep(for: delay) }
                guard !Task.isCancelled && !Task.isShuttingDownGracefully else { break }
            }
            await runPasses()
            delay = work.nextDelay()
        }
    }

    /// One pass, and more at once while each handles a whole batch; all within the stop grace of a shutdown.
    func runPasses() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                repeat {
                    guard let handled = await runPass() else { return }
                    guard let batch = work.batch, handled >= batch else { return }
                } while !Task.isCancelled && !Task.isShuttingDownGracefully
            }
            group.addTask { [grace = work.stopGrace] in
                // Returns on a graceful shutdown plus the grace, or when cancelled because the passes are done.
                do { try await gracefulShutdown() } catch { return }
                try? await Task.sleep(for: grace)
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// One pass with its lease and metrics; nil when it did not run or failed.
    func runPass() async -> Int? {
        let labels = [("work", work.name)]
        if let leases, let lease = work.lease {
            do {
                guard try await leases.take(work.name, for: max(lease, work.interval)) else {
                    Counter(label: "lantern_periodic_passes_total", dimensions: labels + [("outcome", "skipped")]).increment()
                    return nil
                }
            } catch {
                Counter(label: "lantern_periodic_passes_total", dimensions: labels + [("outcome", "failed")]).increment()
                logger.warning("periodic work could not take its lease", metadata: ["work": "\(work.name)", "error": "\(error)"])
                return nil
            }
        }
        let start = ContinuousClock.now
        do {
            let handled = try await work.pass()
            Timer(label: "lantern_periodic_pass_duration_seconds", dimensions: labels).recordNanoseconds((ContinuousClock.now - start).nanoseconds)
            Counter(label: "lantern_periodic_passes_total", dimensions: labels + [("outcome", "ok")]).increment()
            if handled > 0 { Counter(label: "lantern_periodic_items_total", dimensions: labels).increment(by: handled) }
            Gauge(label: "lantern_periodic_last_success_seconds", dimensions: labels).record(Date().timeIntervalSince1970)
            return handled
        } catch is CancellationError {
            return nil
        } catch {
            Timer(label: "lantern_periodic_pass_duration_seconds", dimensions: labels).recordNanoseconds((ContinuousClock.now - start).nanoseconds)
            Counter(label: "lantern_periodic_passes_total", dimensions: labels + [("outcome", "failed")]).increment()
            if Task.isCancelled { return nil }
            logger.warning("periodic work failed", metadata: ["work": "\(work.name)", "error": "\(error)"])
            return nil
        }
    }
}

