import Foundation
import HTTPTypes
import HummingbirdTesting
import LanternContracts
import LanternCore
import LanternTestSupport
import Testing

/// `/v1/symbi` over the real database: ranges, thresholds, rule states, offline batches, the cache headers,
/// sessions, the purge, the export and the deletion.
@Suite(.serialized) struct SymbiRoutesTests {
    // 2026-11-18 10:13 UTC; 12:13 in Kyiv.
    static let start = Date(timeIntervalSince1970: 1_795_000_000)

    @Test func outOfRangeValuesAreRefusedNamingTheFieldAndRange() async throws {
        try await HealthBrainHarness.run(start: Self.start) { h in
            let user = UUID()
            for (body, field) in [
                (#"{"days":[{"date":"2026-11-18","source":"manual","steps":100001}]}"#, "days[0].steps"),
                (#"{"days":[{"date":"2026-11-18","source":"manual","steps":-1}]}"#, "days[0].steps"),
                (#"{"days":[{"date":"2026-11-18","source":"manual","sleepHours":24.5}]}"#, "days[0].sleepHours"),
                (#"{"days":[{"date":"2026-11-18","source":"manual","hrvMs":0}]}"#, "days[0].hrvMs"),
                (#"{"days":[{"date":"2026-11-18","source":"fitbit","steps":10}]}"#, "days[0].source"),
                (#"{"days":[{"date":"2026-11-19","source":"manual","steps":10}]}"#, "days[0].date"),
                (#"{"days":[{"date":"2026-10-01","source":"manual","steps":10}]}"#, "days[0].date"),
                (#"{"days":[{"date":"2026-11-18","source":"manual"}]}"#, "days[0]"),
                (#"{"timeZone":"Mars/Olympus","days":[{"date":"2026-11-18","source":"manual","steps":10}]}"#, "timeZone"),
                (#"{"days":[]}"#, "days"),
                (#"{"days":[{"date":"2026-11-18","source":"manual","steps":10}]}"#, "timeZone"),
            ] {
                let response = try await h.send(.post, "/v1/symbi/metrics", as: user, json: body)
                #expect(response.status == .unprocessableContent, "\(body)")
                let errors = try h.json(response)["errors"] as? [[String: Any]] ?? []
                #expect(errors.contains { $0["field"] as? String == field }, "\(body): \(errors)")
            }
            let steps = try await h.send(.post, "/v1/symbi/metrics", as: user, json: #"{"days":[{"date":"2026-11-18","source":"manual","steps":100001}]}"#)
            #expect(String(buffer: steps.body).contains("0 to 100000"))
            #expect(try await h.count("SELECT count(*)::int FROM health.metrics") == 0)
            let other = try await h.client.execute(uri: "/v1/symbi/state", method: .get, headers: try await h.headers(user, app: .roastmelater))
            #expect(other.status == .forbidden)
        }
    }

    @Test func thresholdsArePersistedAndApplyToLaterCalculations() async throws {
        try await HealthBrainHarness.run(start: Self.start) { h in
            let user = UUID()
            let bad = try await h.send(.put, "/v1/symbi/settings", as: user, json: #"{"thresholds":{"sadToResting":9000,"restingToActive":8000}}"#)
            #expect(bad.status == .unprocessableContent)
            #expect(String(buffer: bad.body).contains("thresholds.sadToResting"))
            let first = try await h.upload(user, date: "2026-11-18", steps: 5_000)
            #expect(try h.json(first)["state"] as? String == "resting")
            #expect(try h.json(first)["source"] as? String == "rules")
            let saved = try await h.send(.put, "/v1/symbi/settings", as: user, json: #"{"thresholds":{"sadToResting":1000,"restingToActive":4000}}"#)
            #expect(saved.status == .ok)
            let settings = try h.json(try await h.get("/v1/symbi/settings", as: user))
            #expect((settings["thresholds"] as? [String: Any])?["restingToActive"] as? Int == 4_000)
            let later = try await h.upload(user, date: "2026-11-18", steps: 5_001, recordedAt: Self.start.addingTimeInterval(60))
            #expect(try h.json(later)["state"] as? String == "active")
            let sad = try await h.upload(user, date: "2026-11-18", source: "manual", steps: 10)
            #expect(try h.json(sad)["state"] as? String == "active")  // synced mode: HealthKit's day wins over a manual entry
            _ = try await h.send(.put, "/v1/symbi/settings", as: user, json: #"{"mode":"manual"}"#)
            let manual = try await h.upload(user, date: "2026-11-18", source: "manual", steps: 10, recordedAt: Self.start.addingTimeInterval(120))
            #expect(try h.json(manual)["state"] as? String == "sad")
        }
    }

    @Test func stateHasAnETagForTheOfflineCache() async throws {
        try await HealthBrainHarness.run(start: Self.start) { h in
            let user = UUID()
            _ = try await h.upload(user, date: "2026-11-18", steps: 9_000)
            let state = try await h.get("/v1/symbi/state", as: user)
            let etag = try #require(state.headers[.eTag])
            #expect(try h.json(state)["state"] as? String == "active")
            let again = try await h.get("/v1/symbi/state", as: user, extra: [.ifNoneMatch: etag])
            #expect(again.status == .notModified)
            _ = try await h.upload(user, date: "2026-11-18", steps: 100, recordedAt: Self.start.addingTimeInterval(60))
            let changed = try await h.get("/v1/symbi/state", as: user, extra: [.ifNoneMatch: etag])
            #expect(changed.status == .ok)
        }
    }

    /// An offline app's batch: the same day and source twice keeps the later reading whatever the order of arrival,
    /// and a redelivered batch changes nothing.
    @Test func offlineBatchesAreIdempotentAndTheNewestReadingWins() async throws {
        try await HealthBrainHarness.run(start: Self.start) { h in
            let user = UUID()
            let batch = """
                {"timeZone":"Europe/Kyiv","days":[
                  {"date":"2026-11-16","source":"googlefit","recordedAt":"2026-11-16T20:00:00Z","steps":12000,"sleepHours":8,"hrvMs":50},
                  {"date":"2026-11-17","source":"googlefit","recordedAt":"2026-11-17T20:00:00Z","steps":3000,"sleepHours":6},
                  {"date":"2026-11-18","source":"googlefit","recordedAt":"2026-11-18T09:00:00Z","steps":1000}]}
                """
            #expect(try await h.send(.post, "/v1/symbi/metrics", as: user, json: batch).status == .ok)
            #expect(try await h.send(.post, "/v1/symbi/metrics", as: user, json: batch).status == .ok)
            let older = """
                {"timeZone":"Europe/Kyiv","days":[{"date":"2026-11-16","source":"googlefit","recordedAt":"2026-11-16T08:00:00Z","steps":10}]}
                """
            _ = try await h.send(.post, "/v1/symbi/metrics", as: user, json: older)
            #expect(try await h.count("SELECT count(*)::int FROM health.metrics") == 3)
            #expect(try await h.count("SELECT steps FROM health.metrics WHERE local_date = '2026-11-16'") == 12_000)
            let history = try h.json(try await h.get("/v1/symbi/history", as: user))["days"] as? [[String: Any]] ?? []
            #expect(history.map { $0["state"] as? String } == ["sad", "resting", "active"])
            #expect(history.last?["steps"] as? String == "above goal")
            let state = try h.json(try await h.get("/v1/symbi/state", as: user))
            #expect(state["state"] as? String == "sad" && state["localDate"] as? String == "2026-11-18")
            #expect(state["activeDays"] as? Int == 1)
        }
    }

    /// Two phones (or retries) writing the same pet at once: each write is decided on the revision it read and done
    /// again when another came first, so no day is lost and none counted twice.
    @Test func concurrentUploadsLoseNothing() async throws {
        try await HealthBrainHarness.run(start: Self.start) { h in
            let user = UUID()
            _ = try await h.upload(user, date: "2026-11-18", steps: 100)
            try await withThrowingTaskGroup(of: Int.self) { group in
                for back in 1...12 {
                    group.addTask {
                        let date = LocalDay(year: 2026, month: 11, day: 18).adding(days: -back).description
                        return try await h.upload(user, date: date, source: back % 2 == 0 ? "healthkit" : "manual", steps: 9_000).status.code
                    }
                }
                for try await status in group { #expect(status == 200) }
            }
            let state = try h.json(try await h.get("/v1/symbi/state", as: user))
            #expect(state["activeDays"] as? Int == 12)
            #expect(state["state"] as? String == "sad" && state["localDate"] as? String == "2026-11-18")
            #expect(try await h.count("SELECT count(*)::int FROM health.days WHERE active_counted") == 12)
            #expect(try await h.count("SELECT count(*)::int FROM health.metrics") == 13)
        }
    }

    @Test func calmSessionsOnlyForAnUpsetPetAndOnce() async throws {
        try await HealthBrainHarness.run(start: Self.start) { h in
            let user = UUID()
            _ = try await h.upload(user, date: "2026-11-18", steps: 5_000)
            let refused = try await h.send(.post, "/v1/symbi/sessions", as: user, key: "s-1", json: #"{"minutes":3}"#)
            #expect(refused.status == .conflict)
            #expect(try h.json(refused)["state"] as? String == "resting")
            #expect(try await h.send(.post, "/v1/symbi/sessions", as: user, key: "s-0", json: #"{"minutes":6}"#).status == .unprocessableContent)
            #expect(try await h.send(.post, "/v1/symbi/sessions", as: user, json: #"{"minutes":3}"#).status == .unprocessableContent)
            try await h.execute("UPDATE health.pets SET state = 'stressed', state_source = 'model'")
            let calmed = try await h.send(.post, "/v1/symbi/sessions", as: user, key: "s-2", json: #"{"minutes":3}"#)
            #expect(calmed.status == .created)
            #expect(try h.json(calmed)["state"] as? String == "calm")
            // As its API document promises: the state's ETag (the one GET /v1/symbi/state gives for it) and no-store.
            #expect(calmed.headers[.cacheControl] == "no-store" && calmed.headers[.eTag]?.hasPrefix("\"") == true, "\(calmed.headers)")
            #expect(try await h.get("/v1/symbi/state", as: user).headers[.eTag] == calmed.headers[.eTag])
            #expect(try h.json(calmed)["source"] as? String == "session")
            let replay = try await h.send(.post, "/v1/symbi/sessions", as: user, key: "s-2", json: #"{"minutes":3}"#)
            #expect(replay.status == .ok)
            #expect(try h.json(replay)["mindfulMinutes"] as? Int == 3)
            #expect(replay.headers[.cacheControl] == "no-store" && replay.headers[.eTag] != nil)
            // The rule's state from a later upload the same day does not undo the calm.
            let after = try await h.upload(user, date: "2026-11-18", steps: 5_100, recordedAt: Self.start.addingTimeInterval(60))
            #expect(try h.json(after)["state"] as? String == "calm")
            // The frame goes through the outbox relay, asynchronously: waited for, not read once.
            #expect(try await eventually(timeout: .seconds(10)) {
                try await h.published(RealtimeFrame.eventType, on: .realtime)
                    .contains { (try? $0.payload(as: RealtimeFrame.self)).flatMap { try? $0.body(as: SymbiFrames.State.self) }?.state == "calm" }
            })
        }
    }

    /// Req 11.3: with the clock moved, a purge pass leaves no raw row processed more than 24 hours ago, and keeps
    /// the newer ones and every derived day.
    @Test func thePurgeLeavesNoRawRowOlderThanADay() async throws {
        try await HealthBrainHarness.run(start: Self.start, extra: ["PURGE_INTERVAL_SECONDS": "0.1"]) { h in
            let user = UUID()
            _ = try await h.upload(user, date: "2026-11-17", steps: 9_000, sleep: 7)
            h.time.advance(by: 20 * 3600)
            _ = try await h.upload(user, date: "2026-11-18", steps: 4_000)
            h.time.advance(by: 4 * 3600 + 1)
            try await waitUntil { try await h.count("SELECT count(*)::int FROM health.metrics WHERE local_date = '2026-11-17'") == 0 }
            let now = h.time.now.timeIntervalSince1970
            #expect(try await h.count("SELECT count(*)::int FROM health.metrics WHERE processed_at < to_timestamp(\(now - 86_400))") == 0)
            #expect(try await h.count("SELECT count(*)::int FROM health.metrics") == 1)
            #expect(try await h.count("SELECT count(*)::int FROM health.days") == 2)
        }
    }

    @Test func exportHoldsEverythingAndDeletionLeavesNothing() async throws {
        try await HealthBrainHarness.run(start: Self.start) { h in
            let user = UUID(), other = UUID()
            _ = try await h.upload(user, date: "2026-11-18", steps: 9_000, sleep: 7.5, hrv: 48)
            _ = try await h.upload(other, date: "2026-11-18", steps: 9_000)
            try await h.execute("UPDATE health.pets SET state = 'anxious', state_source = 'model' WHERE user_id = '\(user.lowercased)'")
            _ = try await h.send(.post, "/v1/symbi/sessions", as: user, key: "k", json: #"{"minutes":2}"#)
            let export = try await h.get("/v1/symbi/export", as: user)
            #expect(export.headers[.contentDisposition]?.contains("attachment") == true)
            let body = try h.json(export)
            let metrics = body["metrics"] as? [[String: Any]] ?? []
            #expect(metrics.first?["steps"] as? Int == 9_000 && metrics.first?["hrvMs"] as? Double == 48)
            #expect(metrics.first?["deletedBy"] != nil)
            #expect((body["sessions"] as? [Any])?.count == 1 && (body["days"] as? [Any])?.count == 1)
            #expect((body["settings"] as? [String: Any])?["mode"] as? String == "synced")

            try await h.publish(IdentityEvents.UserDeleted(userId: user.lowercased, app: .symbi), producer: "identity")
            try await waitUntil { try await h.count("SELECT count(*)::int FROM health.pets WHERE user_id = '\(user.lowercased)'") == 0 }
            for table in ["pets", "metrics", "days", "sessions", "evolutions"] {
                #expect(try await h.count("SELECT count(*)::int FROM health.\(table) WHERE user_id = '\(user.lowercased)'") == 0, "\(table)")
            }
            #expect(try await h.count("SELECT count(*)::int FROM health.pets WHERE user_id = '\(other.lowercased)'") == 1)
            // The deleted account's token still works for a while: its writes are refused, nothing comes back.
            let late = try await h.upload(user, date: "2026-11-18", steps: 100)
            #expect(late.status == .unauthorized && String(buffer: late.body).contains("account_deleted"))
            #expect(try await h.send(.put, "/v1/symbi/settings", as: user, json: #"{"mode":"manual"}"#).status == .unauthorized)
            #expect(try await h.count("SELECT count(*)::int FROM health.pets WHERE user_id = '\(user.lowercased)'") == 0)
            #expect(try await h.count("SELECT count(*)::int FROM health.metrics WHERE user_id = '\(user.lowercased)'") == 0)
        }
    }
}

/// Polls `condition` until it holds (30 s at most), recording a failure otherwise.
func waitUntil(_ condition: @Sendable () async throws -> Bool) async throws {
    #expect(try await eventually(condition))
}
