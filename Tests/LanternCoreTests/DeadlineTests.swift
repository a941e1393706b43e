import Dispatch
import LanternCore
import Synchronization
import Testing

@Suite("withDeadline")
struct DeadlineTests {
    @Test("returns the operation's result or error when it finishes in time")
    func inTime() async throws {
        #expect(try await withDeadline(.seconds(5)) { 42 } == 42)
        struct Boom: Error {}
        await #expect(throws: Boom.self) { try await withDeadline(.seconds(5)) { () async throws -> Int in throw Boom() } }
    }

    @Test("at the deadline the operation is cancelled and the caller leaves")
    func cancelsAtDeadline() async throws {
        let cancelled = Mutex(false)
        let started = ContinuousClock.now
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(100)) { () async throws -> Int in
                do { try await Task.sleep(for: .seconds(120)) } catch { cancelled.withLock { $0 = true } }
                return 1
            }
        }
        // Well before the operation's own 120 s: the caller left at the deadline (a loaded machine adds seconds, not minutes).
        #expect(ContinuousClock.now - started < .seconds(60))
        // The abandoned operation sees its cancellation soon after (polled: a loaded machine may take a while).
        for _ in 0..<600 where !cancelled.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(50)) }
        #expect(cancelled.withLock { $0 })
    }

    @Test("the caller does not wait for an operation that ignores cancellation")
    func doesNotWait() async throws {
        let finished = Mutex(false)
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(100)) { () async throws -> Int in
                // A wait that cannot be cancelled, like a request that takes a while to tear down.
                await withCheckedContinuation { continuation in
                    DispatchQueue.global().asyncAfter(deadline: .now() + 10) { continuation.resume() }
                }
                finished.withLock { $0 = true }
                return 1
            }
        }
        // Ordering, not timing: the caller is back while the operation still runs.
        #expect(!finished.withLock { $0 })
    }

    @Test("a zero timeout fails at once without running the operation")
    func zero() async {
        let ran = Mutex(false)
        await #expect(throws: DeadlineExceeded.self) { try await withDeadline(.zero) { ran.withLock { $0 = true } } }
        #expect(!ran.withLock { $0 })
    }
}
