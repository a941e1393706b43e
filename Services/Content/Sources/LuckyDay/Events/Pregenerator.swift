import ContentKit
import Foundation
import LanternCore
import Logging
import LanternService

/// Makes each user's next fortune ahead of time, so breaking the cookie is instant (and a slow model costs
/// nobody a wait). Rows of `content.pregeneration` are leased, so replicas share the work and a crashed worker's
/// rows come back when the lease ends.
struct Pregenerator: Sendable {
    let schedule: ScheduleStore
    let fortunes: FortuneStore
    let writer: FortuneWriter
    let clock: WallClock
    /// A fortune made ahead has no user waiting: the model may take longer than the 5 s of a live break.
    let budget: Duration
    let logger: Logger

    static let lease: TimeInterval = 120
    static let batch = 16

    /// Every `interval`, and at once again while a pass took a whole batch.
    func work(every interval: Duration) -> PeriodicWork {
        PeriodicWork("luckyday_pregeneration", every: interval, batch: Self.batch) { try await runOnce() }
    }

    /// Makes the fortunes due now (up to 16); returns how many leases it took.
    @discardableResult
    func runOnce() async throws -> Int {
        let now = clock.now()
        let lease = now.addingTimeInterval(Self.lease)
        let users = try await schedule.leasePregenerations(now: now, leaseUntil: lease, limit: Self.batch)
        await withTaskGroup(of: Void.self) { group in
            for user in users {
                group.addTask {
                    do { try await make(for: user, lease: lease) } catch {
                        logger.warning("a fortune could not be made ahead", metadata: ["error": "\(error)"])
                    }
                }
            }
        }
        return users.count
    }

    private func make(for user: UUID, lease: Date) async throws {
        guard let context = try await fortunes.breakContext(of: user), let profile = try await fortunes.profiles.profile(of: user) else {
            return try await schedule.cancelPregeneration(for: user)
        }
        // Written for the local day the next cookie opens (today when it is already open to break).
        let opens = context.latest?.fortune.opensAgainAt ?? clock.now()
        let day = LocalDay(max(opens, clock.now()), in: TimeZoneName.zone(profile.timeZone) ?? .gmt)
        let fortune = await writer.write(profile, day: day, poolPosition: context.artisanalUsed, budget: budget)
        try await schedule.finishPregeneration(fortune, for: user, profileVersion: profile.version, day: day, lease: lease, at: clock.now())
    }
}

/// Sends the "cookie ready" reminders that are due, every `interval` (at once again while a pass sent a whole batch).
enum ReminderScheduler {
    static let batch = 200

    static func work(schedule: ScheduleStore, clock: WallClock, every interval: Duration) -> PeriodicWork {
        PeriodicWork("luckyday_reminders", every: interval, batch: batch) { try await schedule.sendDueReminders(now: clock.now(), limit: batch) }
    }
}
