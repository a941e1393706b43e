import Foundation
@testable import GamificationService
import HTTPTypes
import LanternContracts
import LanternCore
import LanternTestSupport
import Testing

/// Check-ins through the routes, on the real database: the calendar where most apps get it wrong (DST, midnight,
/// flights), devices at once, late and repeated check-ins, the freeze.
@Suite(.serialized) struct StreakTests {
    typealias H = GamificationHarness

    /// Checks in at each `YYYY-MM-DD HH:MM` of `zone`, moving the clock there; returns the last answer.
    @discardableResult
    static func checkIns(_ h: H, _ user: UUID, _ times: [String], zone: String) async throws -> [String: Any] {
        var last: [String: Any] = [:]
        for time in times {
            let at = H.date(time, zone)
            h.time.set(at)
            let response = try await h.checkIn(user, zone: zone, at: at)
            #expect(response.status == .ok, "\(time): \(String(buffer: response.body))")
            last = response.json
        }
        return last
    }

    @Test("local calendar days, not 24 hours: DST days of 23 and 25 hours in Kyiv and New York, either side of midnight")
    func daylightSavingAndMidnight() async throws {
        try await H.run { h in
            // Kyiv falls back on 2026-10-25 (a 25-hour day); New York springs forward on 2026-03-08 (23 hours).
            for (zone, days) in [("Europe/Kyiv", ["2026-10-24 23:59", "2026-10-25 00:01", "2026-10-26 23:30", "2026-10-27 00:10"]),
                                 ("America/New_York", ["2026-03-07 23:50", "2026-03-08 03:30", "2026-03-09 00:05"])] {
                let user = UUID()
                let answer = try await Self.checkIns(h, user, days, zone: zone)
                #expect(answer[path: "streak.current"] as? Int == days.count, "\(zone)")
                #expect(answer[path: "localDate"] as? String == String(days.last!.prefix(10)))
                #expect(answer[path: "streak.countedToday"] as? Bool == true)
            }
            // 23:59 then 00:01 two days later: a whole day (of 25 hours) missed.
            let user = UUID()
            let answer = try await Self.checkIns(h, user, ["2026-10-24 23:59", "2026-10-26 00:01"], zone: "Europe/Kyiv")
            #expect(answer[path: "outcome"] as? String == "restarted")
            #expect(answer[path: "streak.current"] as? Int == 1)
            #expect(answer[path: "streak.longest"] as? Int == 1)
            #expect(answer[path: "streak.totalDays"] as? Int == 2)
            // The same local day twice: counted once, the answer names that day.
            h.time.set(H.date("2026-10-26 18:00", "Europe/Kyiv"))
            let again = try await h.checkIn(user, zone: "Europe/Kyiv", at: H.date("2026-10-26 18:00", "Europe/Kyiv"))
            #expect(again.json[path: "counted"] as? Bool == false)
            #expect(again.json[path: "outcome"] as? String == "alreadyCounted")
            #expect(again.json[path: "localDate"] as? String == "2026-10-26")
        }
    }

    @Test("a flight Hanoi → Los Angeles and back neither breaks nor double-counts the streak")
    func flight() async throws {
        try await H.run { h in
            let user = UUID()
            // Hanoi on the 10th and 11th; the flight leaves Hanoi the 12th at 09:00 and lands in LA the 11th at 19:00 local.
            try await Self.checkIns(h, user, ["2026-12-10 08:00", "2026-12-11 08:00", "2026-12-12 07:00"], zone: "Asia/Ho_Chi_Minh")
            var answer = try await Self.checkIns(h, user, ["2026-12-11 19:30"], zone: "America/Los_Angeles")
            // LA's 11th is before Hanoi's 12th, already counted: not a second day for the same hours.
            #expect(answer[path: "counted"] as? Bool == false)
            #expect(answer[path: "localDate"] as? String == "2026-12-11")
            answer = try await Self.checkIns(h, user, ["2026-12-13 09:00", "2026-12-14 23:00"], zone: "America/Los_Angeles")
            #expect(answer[path: "streak.current"] as? Int == 5)
            // Back: leaves LA the 14th at 23:30, lands in Hanoi the 16th at 05:30 — Hanoi's 15th passed in the air.
            answer = try await Self.checkIns(h, user, ["2026-12-16 06:00"], zone: "Asia/Ho_Chi_Minh")
            #expect(answer[path: "outcome"] as? String == "extended")
            #expect(answer[path: "streak.current"] as? Int == 6)
            #expect(answer[path: "localDate"] as? String == "2026-12-16")
            // A real missed day after it still breaks it.
            answer = try await Self.checkIns(h, user, ["2026-12-18 08:00"], zone: "Asia/Ho_Chi_Minh")
            #expect(answer[path: "streak.current"] as? Int == 1)
        }
    }

    @Test("a zone is answered as the app sent it: UTC stays UTC (Foundation calls it GMT), a link stays the link (#44 item 5)",
          arguments: ["UTC", "Europe/Kiev", "Etc/UTC", "Asia/Calcutta"])
    func zoneAsSent(_ zone: String) async throws {
        try await H.run { h in
            let user = UUID()
            let answer = try await Self.checkIns(h, user, ["2026-12-01 08:00"], zone: zone)
            #expect(answer[path: "streak.timeZone"] as? String == zone, "\(answer)")
            #expect(try await h.get("/v1/gamification/profile", as: user).json[path: "streak.timeZone"] as? String == zone)
            #expect(try await h.get("/v1/gamification/reminders", as: user).json[path: "timeZone"] as? String == zone)
        }
    }

    @Test("the same instant from across the date line is no new day: Pago Pago, then Kiritimati, counts once; hours later it does (#44 item 3)")
    func dateLineHop() async throws {
        try await H.run { h in
            let user = UUID()
            let at = H.date("2026-12-01 23:00", "Pacific/Pago_Pago")
            h.time.set(at)
            let first = try await h.checkIn(user, zone: "Pacific/Pago_Pago", at: at)
            #expect(first.json[path: "outcome"] as? String == "started")
            for zone in ["Pacific/Kiritimati", "Pacific/Kiritimati", "Pacific/Tongatapu"] {
                let hop = try await h.checkIn(user, zone: zone, at: at)
                #expect(hop.json[path: "counted"] as? Bool == false && hop.json[path: "outcome"] as? String == "alreadyCounted", "\(zone): \(hop.json)")
                #expect(hop.json[path: "streak.longest"] as? Int == 1 && hop.json[path: "streak.totalDays"] as? Int == 1, "\(hop.json)")
            }
            // Two hours on, it is the next day in Pago Pago too: a real day, and the streak goes on.
            let later = at.addingTimeInterval(2 * 3600)
            h.time.set(later)
            let next = try await h.checkIn(user, zone: "Pacific/Kiritimati", at: later)
            #expect(next.json[path: "outcome"] as? String == "extended" && next.json[path: "streak.current"] as? Int == 2, "\(next.json)")
        }
    }

    @Test("a retry under the same key is answered as it was then, not re-rendered at the retry's time (#44 item 3)")
    func replayAnsweredAsThen() async throws {
        try await H.run { h in
            let user = UUID(), zone = "America/New_York", key = UUID().uuidString
            try await Self.checkIns(h, user, ["2026-12-01 19:00", "2026-12-02 19:00"], zone: zone)
            let at = H.date("2026-12-03 20:39", zone)
            h.time.set(at)
            let answer = try await h.checkIn(user, zone: zone, at: at, key: key)
            #expect(answer.json[path: "streak.current"] as? Int == 3 && answer.json[path: "streak.countedToday"] as? Bool == true)
            for hours in [6.0, 30, 60] {
                h.time.set(at.addingTimeInterval(hours * 3600))
                let retry = try await h.checkIn(user, zone: zone, at: at, key: key)
                #expect(String(buffer: retry.body) == String(buffer: answer.body), "\(hours) h later")
            }
        }
    }

    @Test("the latest check-in by time decides the zone, counted or not: an older one sent after does not move it (#44 item 3)")
    func latestByTimeDecidesTheZone() async throws {
        try await H.run { h in
            let user = UUID()
            let base = H.date("2026-12-01 01:00", "UTC")
            h.time.set(base.addingTimeInterval(120))
            #expect(try await h.checkIn(user, zone: "Europe/London", at: base.addingTimeInterval(20)).json[path: "outcome"] as? String == "started")
            #expect(try await h.checkIn(user, zone: "Europe/Paris", at: base.addingTimeInterval(80)).json[path: "outcome"] as? String == "alreadyCounted")
            _ = try await h.checkIn(user, zone: "Europe/London", at: base.addingTimeInterval(50))
            #expect(try await h.get("/v1/gamification/reminders", as: user).json[path: "timeZone"] as? String == "Europe/Paris")
            #expect(try await h.get("/v1/gamification/profile", as: user).json[path: "streak.timeZone"] as? String == "Europe/Paris")
            // A newer one moves it.
            _ = try await h.checkIn(user, zone: "Europe/London", at: base.addingTimeInterval(100))
            #expect(try await h.get("/v1/gamification/reminders", as: user).json[path: "timeZone"] as? String == "Europe/London")
        }
    }

    @Test("two devices at once: ten check-ins in the same second add one day; the same key gives the same answer")
    func devicesAtOnce() async throws {
        try await H.run { h in
            let user = UUID()
            let zone = "Asia/Ho_Chi_Minh"
            for day in ["2026-12-01 08:00", "2026-12-02 08:00"] {
                let at = H.date(day, zone)
                h.time.set(at)
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<10 {
                        group.addTask {
                            let response = try await h.checkIn(user, zone: zone, at: at)
                            #expect(response.status == .ok, "\(String(buffer: response.body))")
                            return response.json[path: "counted"] as? Bool == true ? 1 : 0
                        }
                    }
                    return try await group.reduce(0, +)
                }
                #expect(statuses == 1, "\(day): exactly one check-in counted")
            }
            let profile = try await h.get("/v1/gamification/profile", as: user)
            #expect(profile.json[path: "streak.current"] as? Int == 2)
            #expect(profile.json[path: "streak.totalDays"] as? Int == 2)

            // A retry with its key: the first answer again, nothing counted twice — also ten at once.
            let at = H.date("2026-12-03 08:00", zone)
            h.time.set(at)
            let key = UUID().uuidString
            let bodies = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<10 { group.addTask { String(buffer: try await h.checkIn(user, zone: zone, at: at, key: key).body) } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(bodies.count == 1)
            #expect(try await h.count("SELECT count(*)::int FROM gamification.check_ins WHERE user_id = '\(user.lowercased)'") == 21)
            #expect(try await h.get("/v1/gamification/profile", as: user).json[path: "streak.current"] as? Int == 3)
        }
    }

    @Test("late check-ins: accepted up to 72 hours, fill the day that broke the streak, never roll it back; later ones refused naming occurredAt")
    func lateCheckIns() async throws {
        try await H.run { h in
            let user = UUID()
            let zone = "America/New_York"
            try await Self.checkIns(h, user, ["2026-11-01 09:00", "2026-11-02 09:00"], zone: zone)
            // The phone was offline on the 3rd; the tablet checks in on the 4th: broken…
            var answer = try await Self.checkIns(h, user, ["2026-11-04 09:00"], zone: zone)
            #expect(answer[path: "streak.current"] as? Int == 1)
            // …until the phone's check-in of the 3rd arrives.
            let late = try await h.checkIn(user, zone: zone, at: H.date("2026-11-03 21:00", zone))
            #expect(late.json[path: "outcome"] as? String == "filled")
            #expect(late.json[path: "late"] as? Bool == true)
            #expect(late.json[path: "localDate"] as? String == "2026-11-03")
            #expect(late.json[path: "streak.current"] as? Int == 4)
            // An old day already counted changes nothing.
            answer = try await h.checkIn(user, zone: zone, at: H.date("2026-11-02 21:00", zone)).json
            #expect(answer[path: "streak.current"] as? Int == 4)
            #expect(answer[path: "counted"] as? Bool == false)
            // Beyond 72 hours, or ahead of the clock: 422 naming the field.
            for at in [H.date("2026-11-01 08:00", zone), h.time.now.addingTimeInterval(600)] {
                let refused = try await h.checkIn(user, zone: zone, at: at)
                #expect(refused.status == .unprocessableContent)
                #expect((refused.json["errors"] as? [[String: Any]])?.first?["field"] as? String == "occurredAt")
            }
            // Bad input.
            let noZone = try await h.client.execute(uri: "/v1/gamification/check-ins", method: .post, headers: try await h.headers(user, key: "k"),
                                                    body: .init(string: #"{"timeZone":"Mars/Olympus"}"#))
            #expect((noZone.json["errors"] as? [[String: Any]])?.first?["field"] as? String == "timeZone")
            let noKey = try await h.client.execute(uri: "/v1/gamification/check-ins", method: .post, headers: try await h.headers(user),
                                                   body: .init(string: #"{"timeZone":"UTC"}"#))
            #expect(noKey.status == .unprocessableContent)
            #expect((noKey.json["errors"] as? [[String: Any]])?.first?["field"] as? String == "Idempotency-Key")
            // Another app's user: not part of it.
            let pairly = try await h.client.execute(uri: "/v1/gamification/profile", method: .get, headers: try await h.headers(user, app: .pairly))
            #expect(pairly.status == .forbidden)
            #expect(pairly.json["code"] as? String == "gamification_not_available")
        }
    }

    @Test("the freeze: offered after losing a streak of 7+ days, restores it once, two devices claiming it get it once")
    func freeze() async throws {
        try await H.run { h in
            let user = UUID()
            let zone = "Europe/Kyiv"
            let week = (1...8).map { String(format: "2026-09-%02d 10:00", $0) }
            try await Self.checkIns(h, user, week, zone: zone)
            // Nothing before the loss.
            #expect(try await h.send(.post, "/v1/gamification/streak/freeze", as: user).status == .conflict)
            let lost = try await Self.checkIns(h, user, ["2026-09-11 10:00"], zone: zone)
            #expect(lost[path: "streak.current"] as? Int == 1)
            #expect(lost[path: "streak.freeze.offered"] as? Bool == true)
            #expect(lost[path: "streak.freeze.restores"] as? Int == 8)
            let claims = try await withThrowingTaskGroup(of: (Int, Int?).self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        let response = try await h.send(.post, "/v1/gamification/streak/freeze", as: user)
                        return (Int(response.status.code), response.json[path: "streak.current"] as? Int)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(claims.map(\.0).sorted() == [200, 409])
            #expect(claims.first { $0.0 == 200 }?.1 == 9)
            let profile = try await h.get("/v1/gamification/profile", as: user).json
            #expect(profile[path: "streak.current"] as? Int == 9)
            #expect(profile[path: "streak.freeze.used"] as? Bool == true)
            // Used once: the next loss of a long streak offers nothing.
            try await Self.checkIns(h, user, (12...20).map { String(format: "2026-09-%02d 10:00", $0) }, zone: zone)
            let again = try await Self.checkIns(h, user, ["2026-09-23 10:00"], zone: zone)
            #expect(again[path: "streak.freeze.offered"] as? Bool == false)
            let refused = try await h.send(.post, "/v1/gamification/streak/freeze", as: user)
            #expect(refused.json["code"] as? String == "freeze_used")
        }
    }

    @Test("the service's answers equal the model's over random histories sent through the routes and the database")
    func historiesThroughTheDatabase() async throws {
        try await H.run { h in
            var rng = SplitMix(seed: 42)
            for _ in 0..<12 {
                let user = UUID()
                var model = StreakModel()
                for arrival in StreakPropertyTests.history(&rng).prefix(25) {
                    h.time.set(arrival.arrivesAt)
                    if let checkIn = arrival.checkIn {
                        let response = try await h.checkIn(user, zone: checkIn.zone.identifier, at: checkIn.occurredAt)
                        guard checkIn.occurredAt >= arrival.arrivesAt - StreakRules.lateTolerance else {
                            #expect(response.status == .unprocessableContent)
                            continue
                        }
                        #expect(response.status == .ok)
                        model.checkIn(checkIn.occurredAt, zone: checkIn.zone)
                        // The streak as stored, against the model's (not "as of today": the model has no today).
                        #expect(response.json[path: "streak.longest"] as? Int == model.longest)
                        #expect(response.json[path: "streak.totalDays"] as? Int == model.total)
                        #expect(response.json[path: "streak.lastActiveDate"] as? String == model.lastDay?.description)
                    } else {
                        let response = try await h.send(.post, "/v1/gamification/streak/freeze", as: user)
                        #expect((response.status == .ok) == model.freeze())
                    }
                }
            }
        }
    }
}
