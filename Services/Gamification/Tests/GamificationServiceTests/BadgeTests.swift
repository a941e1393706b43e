import Foundation
@testable import GamificationService
import LanternContracts
import LanternCore
import LanternTestSupport
import PostgresNIO
import Testing

/// Badges and rewards from the bus and from check-ins: every rule of the catalogue, earned once under redelivery
/// and reordering, announced by event, frame and push; reminders once across replicas; deletion.
@Suite(.serialized) struct BadgeTests {
    typealias H = GamificationHarness

    static let categories = ["meetings", "deadlines", "email", "coworkers", "boss", "remote", "tech", "office"]

    func badgeList(_ h: H, _ user: UUID) async throws -> [String: [String: Any]] {
        let profile = try await h.get("/v1/gamification/profile", as: user).json
        var byID: [String: [String: Any]] = [:]
        for badge in profile["badges"] as? [[String: Any]] ?? [] {
            byID[(badge["id"] as? String ?? "") + ((badge["subject"] as? String).map { ":" + $0 } ?? "")] = badge
        }
        return byID
    }

    func earned(_ h: H, _ user: UUID, _ id: String) async throws -> Bool {
        try await eventually(timeout: .seconds(20)) { try await badgeList(h, user)[id]?["earned"] as? Bool == true }
    }

    @Test("every rule of the catalogue: generation, Explorer, Spice Adventurer, favourites, sharing, collection completion; progress for the rest")
    func everyRule() async throws {
        try await H.run { h in
            let user = UUID()
            // Nine roasts, all eight categories, spice 1–5, three of the four scenarios of a collection.
            for (index, category) in (Self.categories + ["meetings"]).enumerated() {
                let scenario = index < 3 ? "scenario_\(index)" : nil
                try await h.publish(h.roastGenerated(user, category: category, spice: index % 5 + 1, collection: scenario == nil ? nil : "tet",
                                                     scenario: scenario, size: scenario == nil ? nil : 4))
            }
            #expect(try await earned(h, user, "explorer"))
            #expect(try await earned(h, user, "spice_adventurer"))
            var badges = try await badgeList(h, user)
            #expect(badges["roast_rookie"]?["earned"] as? Bool == false)
            #expect(badges["roast_rookie"]?["progress"] as? Double == 0.9)
            #expect(badges["collection_complete:tet"]?["progress"] as? Double == 0.75)
            #expect(badges["getting_started"]?["progress"] as? Double == 0)
            // The tenth roast, the fourth scenario.
            try await h.publish(h.roastGenerated(user, category: "tech", collection: "tet", scenario: "scenario_3", size: 4))
            #expect(try await earned(h, user, "roast_rookie"))
            #expect(try await earned(h, user, "collection_complete:tet"))
            // Favourites count distinct roasts made favourite; unfavouring and favouring again is not a second one.
            let roasts = (0..<5).map { _ in UUID().lowercased }
            for roast in roasts + [roasts[0]] {
                try await h.publish(ContentEvents.RoastFavourited(roastId: roast, userId: user.lowercased, favourite: true, at: h.time.now))
            }
            try await h.publish(ContentEvents.RoastFavourited(roastId: roasts[1], userId: user.lowercased, favourite: false, at: h.time.now))
            #expect(try await earned(h, user, "keeper"))
            try await h.publish(ContentEvents.RoastShared(roastId: roasts[0], userId: user.lowercased, category: "tech", channel: "zalo", template: nil,
                                                          localDate: "2026-11-26", sharedAt: h.time.now))
            #expect(try await earned(h, user, "first_share"))
            badges = try await badgeList(h, user)
            #expect(badges["curator"]?["progress"] as? Double == 0.2)
            #expect(badges["hype_machine"]?["progress"] as? Double == 0.1)
            // Each earned badge: one event, one frame, one push (through the outbox relay).
            _ = try await eventually { try await h.published("push.requested", on: h.streams.jobs("push")).count >= 6 }
            let events = try await h.published("badge.earned", on: h.streams.events("gamification"))
            #expect(events.count == 6)
            #expect(Set(events.compactMap { $0.data["badge"]?.stringValue }) == ["explorer", "spice_adventurer", "roast_rookie", "collection_complete", "keeper", "first_share"])
            let frames = try await h.published("realtime.frame", on: h.streams.realtime)
            #expect(frames.filter { $0.data["type"]?.stringValue == "badge_earned" }.count == 6)
            let pushes = try await h.published("push.requested", on: h.streams.jobs("push"))
            #expect(pushes.filter { $0.data["messageKey"]?.stringValue == "roastmelater.badge_earned" }.count == 6)
            let explorer = try #require(pushes.first { $0.data["data"]?["badge"]?.stringValue == "explorer" })
            #expect(explorer.data["args"]?["badge.vi"]?.stringValue == "Nhà thám hiểm")
        }
    }

    @Test("earned once: redelivered events and the same events in another order count once")
    func redeliveredAndReordered() async throws {
        try await H.run { h in
            let user = UUID()
            let ids = Self.categories.map { _ in UUID.v7() }
            // Every event twice, the second round backwards.
            for (id, category) in zip(ids, Self.categories) + zip(ids, Self.categories).reversed() {
                try await h.publish(h.roastGenerated(user, category: category), id: id)
            }
            #expect(try await earned(h, user, "explorer"))
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await h.count("SELECT value::int FROM gamification.counters WHERE user_id = '\(user.lowercased)' AND metric = 'count:roast.generated'") == 8)
            let badges = try await TestEnvironment.withPostgres(h.databaseURL) { client in
                var found: [String] = []
                for try await badge in try await client.query("SELECT badge FROM gamification.badges WHERE user_id = \(user)", logger: TestEnvironment.logger).decode(String.self) {
                    found.append(badge)
                }
                return found
            }
            #expect(badges == ["explorer"])
            // The event leaves through the outbox relay: once it is there, it is there once.
            #expect(try await eventually { try await h.published("badge.earned", on: h.streams.events("gamification")).count >= 1 })
            #expect(try await h.published("badge.earned", on: h.streams.events("gamification")).count == 1)
            // A payload that breaks its contract is dead-lettered, not counted.
            try await h.publish(ContentEvents.RoastGenerated(roastId: "r", userId: "not-a-uuid", category: "tech", spice: 1, mood: nil, language: "en",
                                                             artisanal: true, localDate: "2026-11-26", createdAt: h.time.now))
            let dead = try await eventually(timeout: .seconds(60)) {
                (try await h.redis.send(["XLEN", h.streams.deadLetter(of: h.streams.events("content"))]).int ?? 0) >= 1
            }
            #expect(dead)
        }
    }

    @Test("streak milestones: Getting Started at 3 days with its frame, Premium Roast at 7 and Roast Master with the title and flame at 30")
    func streakMilestones() async throws {
        try await H.run(start: H.date("2026-06-01 09:00", "Asia/Ho_Chi_Minh")) { h in
            let user = UUID()
            let days = (0..<30).map { LocalDay(year: 2026, month: 6, day: 1).adding(days: $0).description + " 09:00" }
            let third = try await StreakTests.checkIns(h, user, Array(days.prefix(3)), zone: "Asia/Ho_Chi_Minh")
            #expect((third["badgesEarned"] as? [[String: Any]])?.map { $0["id"] as? String } == ["getting_started"])
            let seventh = try await StreakTests.checkIns(h, user, Array(days[3..<7]), zone: "Asia/Ho_Chi_Minh")
            #expect((seventh["rewardsUnlocked"] as? [[String: Any]])?.map { $0["id"] as? String } == ["premium_roasts"])
            try await StreakTests.checkIns(h, user, Array(days[7...]), zone: "Asia/Ho_Chi_Minh")
            let profile = try await h.client.execute(uri: "/v1/gamification/profile?language=vi", method: .get, headers: try await h.headers(user)).json
            #expect(profile[path: "title.name"] as? String == "Bậc thầy Roast")
            #expect(profile["flame"] as? Bool == true)
            #expect(profile[path: "streak.current"] as? Int == 30)
            // Through the outbox relay.
            _ = try await eventually { try await h.published("streak.changed", on: h.streams.events("gamification")).count >= 30 }
            let unlocked = try await h.published("reward.unlocked", on: h.streams.events("gamification"))
            #expect(unlocked.compactMap { $0.data["reward"]?.stringValue }.sorted() == ["premium_roasts", "roast_master"])
            let streak = try await h.published("streak.changed", on: h.streams.events("gamification"))
            #expect(streak.count == 30)
            let frames = try await h.published("realtime.frame", on: h.streams.realtime)
            #expect(frames.contains { $0.data["type"]?.stringValue == "badge_earned" && $0.data["data"]?["badge"]?.stringValue == "getting_started" })
        }
    }

    @Test("the reminder goes at 22:00 local on the day at risk, once across two replicas and a restart; not when today counted or reminders are off")
    func remindersOnce() async throws {
        try await H.run(start: H.date("2026-07-01 09:00", "Europe/Kyiv")) { h in
            let (kept, forgot, quiet) = (UUID(), UUID(), UUID())
            for user in [kept, forgot, quiet] { try await StreakTests.checkIns(h, user, ["2026-07-01 09:00"], zone: "Europe/Kyiv") }
            let off = try await h.send(.put, "/v1/gamification/reminders", as: quiet, json: #"{"enabled":false}"#)
            #expect(off.json["enabled"] as? Bool == false)
            let reminders = try await h.get("/v1/gamification/reminders", as: forgot).json
            #expect(reminders["nextAt"] as? String == "2026-07-02T19:00:00.000Z")  // 22:00 in Kyiv (UTC+3)
            // One of them checks in on the 2nd; then 22:00 comes, with a second replica running.
            try await StreakTests.checkIns(h, kept, ["2026-07-02 20:00"], zone: "Europe/Kyiv")
            try await h.replica {
                h.time.set(H.date("2026-07-02 22:00", "Europe/Kyiv"))
                let sent = try await eventually(timeout: .seconds(20)) {
                    try await h.published("push.requested", on: h.streams.jobs("push")).contains { $0.subject == forgot.lowercased }
                }
                #expect(sent)
                try await Task.sleep(for: .seconds(1))
            }
            // A restart: the first replica runs on; the plan was cleared, nothing goes twice.
            try await h.replica { try await Task.sleep(for: .seconds(1)) }
            let pushes = try await h.published("push.requested", on: h.streams.jobs("push")).filter { $0.data["messageKey"]?.stringValue == "roastmelater.streak_reminder" }
            #expect(pushes.map(\.subject) == [forgot.lowercased])
            #expect(pushes.first?.data["args"]?["streak"]?.stringValue == "1")
        }
    }

    @Test("a zone change re-plans the reminder")
    func reminderFollowsTheZone() async throws {
        try await H.run(start: H.date("2026-07-01 09:00", "Europe/Kyiv")) { h in
            let user = UUID()
            try await StreakTests.checkIns(h, user, ["2026-07-01 09:00"], zone: "Europe/Kyiv")
            let moved = try await h.send(.put, "/v1/gamification/reminders", as: user, json: #"{"enabled":true,"timeZone":"America/New_York"}"#)
            #expect(moved.json["nextAt"] as? String == "2026-07-03T02:00:00.000Z")  // 22:00 on the 2nd in New York (UTC−4)
            let bad = try await h.send(.put, "/v1/gamification/reminders", as: user, json: #"{"timeZone":"Nowhere"}"#)
            #expect(bad.status == .unprocessableContent)
            #expect(Set((bad.json["errors"] as? [[String: Any]])?.compactMap { $0["field"] as? String } ?? []) == ["enabled", "timeZone"])
        }
    }

    @Test("user.deleted leaves no row of the user in any table, once per event; their late events and tokens count for nothing")
    func deletion() async throws {
        try await H.run { h in
            let (user, other) = (UUID(), UUID())
            for who in [user, other] {
                try await StreakTests.checkIns(h, who, ["2026-11-20 09:00"], zone: "UTC")
                for category in Self.categories { try await h.publish(h.roastGenerated(who, category: category)) }
                #expect(try await earned(h, who, "explorer"))
            }
            let export = try await h.get("/v1/gamification/export", as: user)
            #expect(export.headers[.contentDisposition]?.contains("attachment") == true)
            #expect((export.json["checkIns"] as? [Any])?.count == 1)
            #expect((export.json["members"] as? [Any])?.count == 9)  // 8 categories, 1 spice level

            let deletion = IdentityEvents.UserDeleted(userId: user.lowercased, app: .roastmelater)
            let id = UUID.v7()
            try await h.publish(deletion, producer: "identity", id: id)
            try await h.publish(deletion, producer: "identity", id: id)
            let tables = ["streaks", "check_ins", "counters", "counter_members", "badges", "rewards"]
            let gone = try await eventually(timeout: .seconds(20)) {
                var rows = 0
                for table in tables { rows += try await h.count("SELECT count(*)::int FROM gamification.\(table) WHERE user_id = '\(user.lowercased)'") }
                return rows == 0
            }
            #expect(gone)
            try await h.publish(h.roastGenerated(user, category: "tech"))
            let late = try await h.checkIn(user, zone: "UTC")
            #expect(late.status == .unauthorized)
            try await h.publish(h.roastGenerated(other, category: "tech"))
            _ = try await eventually { try await h.count("SELECT value::int FROM gamification.counters WHERE user_id = '\(other.lowercased)' AND metric = 'count:roast.generated'") == 9 }
            for table in tables {
                #expect(try await h.count("SELECT count(*)::int FROM gamification.\(table) WHERE user_id = '\(user.lowercased)'") == 0, "\(table)")
                if table != "rewards" {  // a day's streak unlocks none
                    #expect(try await h.count("SELECT count(*)::int FROM gamification.\(table) WHERE user_id = '\(other.lowercased)'") > 0, "\(table)")
                }
            }
        }
    }
}
