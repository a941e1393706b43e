import Foundation
import LanternCore
import Logging
import LanternService

/// Runs the retries that came due: every `interval` it claims due items from the `RetryQueue`, looks the
/// device up again (it may have been removed or given a new token meanwhile) and makes the next attempt; a pass that
/// claimed a whole batch is followed by another at once (a backlog drains before the next sleep).
struct RetryScheduler: Sendable {
    let queue: RetryQueue
    let dispatcher: PushDispatcher
    let registry: DeviceRegistry
    let clock: WallClock
    let logger: Logger
    var interval: Duration = .milliseconds(250)
    /// Longer than any attempt with its timeout: an item is only taken again if its worker died.
    var lease: Duration = .seconds(120)
    var batch = 100

    var work: PeriodicWork {
        PeriodicWork("push_retries", every: interval, batch: batch) { try await runOnce() }
    }

    /// One pass; returns how many items it claimed.
    @discardableResult
    func runOnce() async throws -> Int {
        let due = try await queue.claimDue(now: clock.now(), lease: lease, limit: batch)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (member, item) in due {
                group.addTask {
                    guard let user = UUID(uuidString: item.request.userId),
                          let device = try await registry.device(of: user, id: item.deviceId) else {
                        try await queue.complete(member)  // the registration is gone: nobody to retry for
                        return
                    }
                    // Completed only when the attempt's outcome is stored; otherwise the lease runs out and it comes back.
                    if await dispatcher.deliver(item.request, jobID: item.jobId, to: device, attempt: item.attempt) {
                        try await queue.complete(member)
                    }
                }
            }
            try await group.waitForAll()
        }
        return due.count
    }
}
