import Foundation
@testable import LanternService
import LanternCore
import LanternDatabase
import LanternTestSupport
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization
import Testing

private let logger = TestEnvironment.logger

/// Counts what passes did, shared between a pass and the test.
private final class Tally: Sendable {
    private let state = Mutex<(passes: Int, backlog: Int, cancelled: Int)>((0, 0, 0))
    init(backlog: Int = 0) { state.withLock { $0.backlog = backlog } }
    var passes: Int { state.withLock { $0.passes } }
    var backlog: Int { state.withLock { $0.backlog } }
    var cancelled: Int { state.withLock { $0.cancelled } }
    func pass() { state.withLock { $0.passes += 1 } }
    func take(_ limit: Int) -> Int { state.withLock { let n = min(limit, $0.backlog); $0.backlog -= n; return n } }
    func add(_ n: Int) { state.withLock { $0.backlog += n } }
    func wasCancelled() { state.withLock { $0.cancelled += 1 } }
}

/// Runs `services` in a service group until `body` returns, then shuts the group down gracefully and waits for it.
private func running(_ services: [any Service], _ body: @Sendable () async throws -> Void) async throws {
    let group = ServiceGroup(configuration: .init(services: services, logger: logger))
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        do { try await body() } catch {
            await group.triggerGracefulShutdown()
            throw error
        }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
    }
}

@Suite("LanternService: periodic work")
struct PeriodicWorkTests {
    @Test("a pass that takes a whole batch is followed at once by another until a short one; then it waits the interval")
    func drains() async throws {
        let tally = Tally(backlog: 35)
        let work = PeriodicWork("drain", every: .seconds(3600), batch: 10) {
            tally.pass()
            return tally.take(10)
        }
        try await running([PeriodicRunner(work: work, leases: nil, logger: logger)]) {
            let reached = try await eventually { tally.backlog == 0 && tally.passes == 4 }
            #expect(reached)
            // 10 + 10 + 10 + 5: the short pass ends the drain; new work waits for the next interval (an hour).
            tally.add(3)
            try await Task.sleep(for: .milliseconds(300))
            #expect(tally.passes == 4 && tally.backlog == 3)
        }
    }

    @Test("a pass that throws is counted and logged; the next one runs after the interval")
    func failures() async throws {
        let tally = Tally()
        struct Broken: Error {}
        let work = PeriodicWork("flaky", every: .milliseconds(20), jitter: 0) {
            tally.pass()
            if tally.passes <= 2 { throw Broken() }
            return 0
        }
        try await running([PeriodicRunner(work: work, leases: nil, logger: logger)]) {
            let reached = try await eventually { tally.passes >= 4 }
            #expect(reached)
        }
    }

    @Test("a graceful shutdown ends the sleep at once and gives a pass in flight its grace, then cancels it")
    func shutdown() async throws {
        // Asleep for an hour: the shutdown must not wait for it.
        let sleeper = Tally()
        let sleeping = PeriodicWork("sleeping", every: .seconds(3600)) {
            sleeper.pass()
            return 0
        }
        try await running([PeriodicRunner(work: sleeping, leases: nil, logger: logger)]) {
            let reached = try await eventually { sleeper.passes == 1 }
            #expect(reached)
        }

        // In a pass that would take an hour: cancelled after the grace, and the group still stops.
        let busy = Tally()
        let stuck = PeriodicWork("stuck", every: .seconds(3600), stopGrace: .milliseconds(100)) {
            busy.pass()
            do { try await Task.sleep(for: .seconds(3600)) } catch {
                busy.wasCancelled()
                throw error
            }
            return 1
        }
        try await running([PeriodicRunner(work: stuck, leases: nil, logger: logger)]) {
            let reached = try await eventually { busy.passes == 1 }
            #expect(reached)
        }
        #expect(busy.cancelled == 1 && busy.passes == 1)

        // A pass that finishes within the grace is not cut short.
        let finishing = Tally()
        let short = PeriodicWork("short", every: .seconds(3600), stopGrace: .seconds(30)) {
            finishing.pass()
            try await Task.sleep(for: .milliseconds(300))
            finishing.add(1)
            return 1
        }
        try await running([PeriodicRunner(work: short, leases: nil, logger: logger)]) {
            let reached = try await eventually { finishing.passes == 1 }
            #expect(reached)
        }
        #expect(finishing.backlog == 1)
    }

    @Test("leased work runs on one replica at a time; another takes over once the holder's lease ends (by the service's clock)")
    func leases() async throws {
        try await TestEnvironment.withDatabase { url in
            let client = PostgresClient(configuration: try .lantern(url: url), backgroundLogger: logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                try await Migrator.migrate(schema: "svc", migrations: PeriodicMigrations.all, client: client, logger: logger)
                let time = ManualTime(Date(timeIntervalSince1970: 1_800_000_000))
                let first = PeriodicLeases(client: client, schema: "svc", clock: .manual(time), logger: logger, holder: "replica-a")
                let second = PeriodicLeases(client: client, schema: "svc", clock: .manual(time), logger: logger, holder: "replica-b")

                #expect(try await first.take("daily", for: .seconds(60)))
                #expect(try await !second.take("daily", for: .seconds(60)))
                // The holder renews its own lease.
                time.advance(by: 30)
                #expect(try await first.take("daily", for: .seconds(60)))
                time.advance(by: 59)
                #expect(try await !second.take("daily", for: .seconds(60)))
                // The holder stopped renewing: its lease ends, the other replica takes the work.
                time.advance(by: 2)
                #expect(try await second.take("daily", for: .seconds(60)))
                #expect(try await !first.take("daily", for: .seconds(60)))
                // Leases are per work.
                #expect(try await first.take("purge", for: .seconds(60)))

                // Two runners of the same leased work: in one interval only one runs its passes.
                let a = Tally(), b = Tally()
                let interval = Duration.milliseconds(30)
                let workA = PeriodicWork("shared", every: interval, jitter: 0, lease: .seconds(3600)) { a.pass(); return 0 }
                let workB = PeriodicWork("shared", every: interval, jitter: 0, lease: .seconds(3600)) { b.pass(); return 0 }
                try await running([PeriodicRunner(work: workA, leases: first, logger: logger),
                                   PeriodicRunner(work: workB, leases: second, logger: logger)]) {
                    let reached = try await eventually { a.passes + b.passes >= 5 }
                    #expect(reached)
                }
                #expect(min(a.passes, b.passes) == 0 && max(a.passes, b.passes) >= 5, "a: \(a.passes), b: \(b.passes)")
            }
        }
    }
}
