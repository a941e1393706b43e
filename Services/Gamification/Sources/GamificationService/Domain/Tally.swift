import Foundation
import LanternContracts
import LanternCore

/// A batch of activity events and the counter steps the catalogues give each.
public struct ActivityBatch: Sendable {
    public var events: [ActivityEvent]
    public var steps: [UUID: [CounterStep]]
    public var at: Date
}

/// A badge a counter change earned, with what announces it.
public struct BadgeGrant: Sendable {
    public var user: UUID
    public var app: AppID
    public var badge: EarnedBadge
    public var event: GamificationEvents.BadgeEarned
    public var frame: RealtimeFrame
    public var push: PushRequest?
}

public protocol ActivityRecords: Sendable {
    /// Applies the batch's steps once per event id, in one transaction: `decide` gets the counters' changes and
    /// names the badges they earn; those not earned before are recorded and announced. Returns how many were new.
    func apply(_ batch: ActivityBatch, decide: @Sendable ([CounterChange]) -> [BadgeGrant]) async throws -> Int
}

/// Counting what users do (roasts written, shared, favourited) toward badges (REQ-BDG).
public struct Tally: Sendable {
    public let records: any ActivityRecords
    public let achievements: Achievements
    public let clock: WallClock

    public init(records: any ActivityRecords, achievements: Achievements, clock: WallClock) {
        self.records = records
        self.achievements = achievements
        self.clock = clock
    }

    /// Counts `events` (each once, whatever the order or the redeliveries); returns the badges newly earned.
    @discardableResult
    public func record(_ events: [ActivityEvent]) async throws -> Int {
        var steps: [UUID: [CounterStep]] = [:]
        var counted: [ActivityEvent] = []
        for event in events where steps[event.id] == nil {  // an event delivered twice in one batch counts once
            let given = achievements.steps(for: event)
            // Events no rule counts cost nothing: not even their id is written.
            guard !given.isEmpty else { continue }
            steps[event.id] = given
            counted.append(event)
        }
        guard !counted.isEmpty else { return 0 }
        let now = clock.now()
        let achievements = self.achievements
        return try await records.apply(ActivityBatch(events: counted, steps: steps, at: now)) { changes in
            achievements.earned(by: changes, at: now).compactMap { earned in
                guard let catalogue = achievements.catalogues[earned.app],
                      let badge = catalogue.badges.first(where: { $0.id == earned.badge.badge }) else { return nil }
                let (event, frame, push) = BadgeAnnouncement.make(earned.badge, badge: badge, catalogue: catalogue, user: earned.user)
                return BadgeGrant(user: earned.user, app: earned.app, badge: earned.badge, event: event, frame: frame, push: push)
            }
        }
    }
}
