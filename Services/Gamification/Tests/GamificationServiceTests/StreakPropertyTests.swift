import Foundation
@testable import GamificationService
import LanternCore
import Testing

/// Random histories — zones, DST dates, flights, offline delays, duplicates, devices at once, freezes — replayed
/// against the service's streak state and the model that recomputes the streak from the counted days.
@Suite struct StreakPropertyTests {
    /// Zones with DST in both hemispheres, half hours, both sides of the date line.
    static let zones = ["Europe/Kyiv", "America/New_York", "Asia/Ho_Chi_Minh", "America/Los_Angeles", "Pacific/Auckland", "Asia/Kolkata",
                        "UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Australia/Lord_Howe", "America/St_Johns"]
        .compactMap(TimeZoneName.zone)

    /// One thing that reaches the server: a check-in (with when it arrives) or a freeze claim.
    struct Arrival {
        var arrivesAt: Date
        var checkIn: CheckIn?
    }

    /// A history: real time moves on in steps of minutes to days, the user sometimes flies, the app is sometimes
    /// offline (its check-ins arrive later, out of order), retries send the same check-in twice, two devices open
    /// the app at the same moment, and the user sometimes claims the freeze.
    static func history(_ rng: inout SplitMix) -> [Arrival] {
        // Start anywhere in 2024–2027, so DST changes of every zone come up.
        var now = Date(timeIntervalSince1970: 1_704_067_200 + Double(rng.next(below: 4 * 365 * 86_400)))
        var zone = zones[rng.next(below: zones.count)]
        var arrivals: [Arrival] = []
        for _ in 0..<(5 + rng.next(below: 60)) {
            switch rng.next(below: 100) {
            case 0..<55: now += Double(16 * 3600 + rng.next(below: 14 * 3600))  // about a day later
            case 55..<70: now += Double(rng.next(below: 4 * 3600))  // the same evening
            case 70..<80: now += Double(40 * 3600 + rng.next(below: 60 * 3600))  // days missed
            case 80..<85: now += Double(86_400 - 60 + rng.next(below: 120))  // either side of 24 hours
            default: now += Double(rng.next(below: 30 * 3600))
            }
            if rng.next(below: 100) < 12 { zone = zones[rng.next(below: zones.count)] }  // a flight
            let checkIn = CheckIn(occurredAt: now, zone: zone)
            // Usually at once; sometimes from an app that was offline for up to 80 hours (beyond 72 it is refused).
            let delay = rng.next(below: 100) < 15 ? Double(rng.next(below: 80 * 3600)) : 0
            arrivals.append(Arrival(arrivesAt: now + delay, checkIn: checkIn))
            if rng.next(below: 100) < 8 { arrivals.append(Arrival(arrivesAt: now + delay + 1, checkIn: checkIn)) }  // a retry
            if rng.next(below: 100) < 5 {  // a second device at the same moment, elsewhere's clock a little off
                arrivals.append(Arrival(arrivesAt: now + delay, checkIn: CheckIn(occurredAt: now + Double(rng.next(below: 120)) - 60, zone: zone)))
            }
            if rng.next(below: 100) < 10 { arrivals.append(Arrival(arrivesAt: now + delay + 2, checkIn: nil)) }  // the freeze
        }
        return arrivals.enumerated().sorted { ($0.element.arrivesAt, $0.offset) < ($1.element.arrivesAt, $1.offset) }.map(\.element)
    }

    @Test func tenThousandHistoriesAgreeWithTheModel() throws {
        var rng = SplitMix(seed: 0x5EED_2026_1126)
        var steps = 0, late = 0, travelled = 0, fills = 0, freezes = 0, restarts = 0
        for history in 0..<10_000 {
            var state = StreakState()
            var model = StreakModel()
            for arrival in Self.history(&rng) {
                if let checkIn = arrival.checkIn {
                    // The window the route enforces: at most 72 hours late.
                    guard checkIn.occurredAt >= arrival.arrivesAt - StreakRules.lateTolerance else { continue }
                    let outcome = state.apply(checkIn)
                    model.checkIn(checkIn.occurredAt, zone: checkIn.zone)
                    if arrival.arrivesAt > checkIn.occurredAt + 60 { late += 1 }
                    if outcome == .filled { fills += 1 }
                    if outcome == .restarted { restarts += 1 }
                    if outcome == .extended, let last = state.lastDay, model.days[last] == true { travelled += 1 }
                } else {
                    let restored = state.freeze() != nil
                    #expect(restored == model.freeze(), "history \(history): freeze")
                    if restored { freezes += 1 }
                }
                steps += 1
                let expected = model.snapshot
                let actual = StreakModel.Snapshot(current: state.current, longest: state.longest, total: state.totalDays, lastDay: state.lastDay,
                                                  freezeOffer: state.freezeOffer)
                guard actual == expected else {
                    Issue.record("history \(history), step \(steps): service \(actual), model \(expected); days \(model.sorted.map(\.description))")
                    return
                }
            }
        }
        // The histories exercised what they are meant to.
        #expect(steps > 300_000)
        #expect(late > 10_000 && fills > 500 && freezes > 100 && restarts > 10_000 && travelled > 500,
                "late \(late) fills \(fills) freezes \(freezes) restarts \(restarts) travelled \(travelled)")
    }
}

/// A small seeded generator (SplitMix64): the same histories on every run and machine.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func next(below bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
