import Foundation
import HTTPTypes
import HummingbirdTesting
import LanternContracts
import LanternCore
import LanternTestSupport
import Testing

/// The day's brain against a fake Gemini: the label it answers, an invalid label, a model too slow, a model down,
/// one call a day whatever the retries and replicas, and prompts with nothing but descriptor words.
@Suite(.serialized) struct BrainTests {
    // 2026-11-18 12:13 in Kyiv; every user's run is between 20:00 and 23:00 there.
    static let start = Date(timeIntervalSince1970: 1_795_000_000)
    static let evening: TimeInterval = 11 * 3600

    /// Uploads a full day for `user` and moves past the evening; returns the pet's state once the brain decided.
    func dayWithBrain(_ h: HealthBrainHarness, _ user: UUID, date: String = "2026-11-18") async throws -> [String: Any] {
        let upload = try await h.upload(user, date: date, steps: 9_000, sleep: 6.2, hrv: 41)
        #expect(upload.status == .ok)
        h.time.advance(by: Self.evening)
        try await waitUntil {
            try await h.count("SELECT count(*)::int FROM health.pets WHERE user_id = '\(user.lowercased)' AND state_source IN ('model', 'local')") == 1
        }
        return try h.json(try await h.get("/v1/symbi/state", as: user))
    }

    @Test func theModelsLabelBecomesTheState() async throws {
        try await HealthBrainHarness.run(start: Self.start, model: true) { h in
            h.models.script(HealthBrainHarness.model, .ok("Stressed"))
            let user = UUID()
            h.models.forbid(user.lowercased, user.uuidString, "9000", "9,000", "6.2", "41", "2026-11-18")
            let state = try await dayWithBrain(h, user)
            #expect(state["state"] as? String == "stressed")
            #expect(state["source"] as? String == "model")
            #expect(state["canCalm"] as? Bool == true)
            let calls = h.models.received(model: HealthBrainHarness.model)
            #expect(calls.count == 1)
            for call in calls {
                let text = call.system + "\n" + call.prompt
                #expect(!text.contains { $0.isNumber }, "a number reached the model: \(text)")
                #expect(text.contains("above goal") && text.contains("short of goal"))
            }
            // Gemini is asked for an enum, the seven labels.
            let config = calls.first?.json?["generationConfig"] as? [String: Any]
            #expect(config?["responseMimeType"] as? String == "text/x.enum")
        }
    }

    @Test func anInvalidLabelFallsBackToTheRules() async throws {
        try await HealthBrainHarness.run(start: Self.start, model: true) { h in
            h.models.script(HealthBrainHarness.model, .ok("Happy"))
            let user = UUID()
            _ = try await h.upload(user, date: "2026-11-18", steps: 9_000, sleep: 6.2, hrv: 41)
            h.time.advance(by: Self.evening)
            try await waitUntil { h.models.received(model: HealthBrainHarness.model).count == 1 }
            try await waitUntil { try await h.count("SELECT count(*)::int FROM health.pets WHERE brain_day = '2026-11-18'") == 1 }
            try await Task.sleep(for: .milliseconds(300))
            let state = try h.json(try await h.get("/v1/symbi/state", as: user))
            #expect(state["state"] as? String == "active")
            #expect(state["source"] as? String == "rules")
        }
    }

    /// Nothing within the timeout (10 s in production, half a second here): the rules decide, and the slow call is
    /// not repeated. The model never answers, so the rules' day proves the wait was cut short; how soon is not
    /// asserted in seconds (a loaded CI machine once took 11 s for the half-second budget): timing belongs in
    /// benchmarks.
    @Test func aSlowModelFallsBackToTheRulesInTime() async throws {
        try await HealthBrainHarness.run(start: Self.start, model: true, extra: ["BRAIN_TIMEOUT_SECONDS": "0.5"]) { h in
            h.models.script(HealthBrainHarness.model, .hang)
            let user = UUID()
            _ = try await h.upload(user, date: "2026-11-18", steps: 1_000, sleep: 8, hrv: 60)
            h.time.advance(by: Self.evening)
            try await waitUntil { h.models.received(model: HealthBrainHarness.model).count == 1 }
            try await waitUntil { try await h.count("SELECT count(*)::int FROM health.days WHERE source = 'rules' AND updated_at > to_timestamp(\(Self.start.timeIntervalSince1970 + 60))") == 1 }
            let state = try h.json(try await h.get("/v1/symbi/state", as: user))
            #expect(state["state"] as? String == "sad" && state["source"] as? String == "rules")
            try await Task.sleep(for: .milliseconds(500))
            #expect(h.models.received(model: HealthBrainHarness.model).count == 1)
        }
    }

    /// A model that keeps failing is asked at most once a day per user, never once per retry; a second replica changes
    /// nothing; the next day each user's day is asked about again, once.
    @Test func oneCallPerDayUnderRetriesAndReplicas() async throws {
        try await HealthBrainHarness.run(start: Self.start, model: true) { h in
            h.models.script(HealthBrainHarness.model, .serverError(503))
            let users = (0..<20).map { _ in UUID() }
            for user in users { _ = try await h.upload(user, date: "2026-11-18", steps: 9_000, sleep: 7, hrv: 45) }
            try await h.replica {
                h.time.advance(by: Self.evening)
                try await waitUntil { try await h.count("SELECT count(*)::int FROM health.pets WHERE brain_day = '2026-11-18'") == users.count }
                try await Task.sleep(for: .milliseconds(500))
            }
            // At most one call each: fewer once the router puts the failing model in cool-down (then the rules decide
            // without asking).
            let firstDay = h.models.received(model: HealthBrainHarness.model).count
            #expect(firstDay > 0 && firstDay <= users.count)
            for user in users.prefix(3) {
                #expect(try h.json(try await h.get("/v1/symbi/state", as: user))["source"] as? String == "rules")
            }
            // The next day: one more call each.
            h.models.script(HealthBrainHarness.model, .ok("Vibrant"))
            h.time.advance(by: 13 * 3600)  // 12:13 on the 19th
            for user in users { _ = try await h.upload(user, date: "2026-11-19", steps: 15_000, sleep: 8, hrv: 50) }
            h.time.advance(by: Self.evening)
            try await waitUntil { try await h.count("SELECT count(*)::int FROM health.pets WHERE brain_day = '2026-11-19'") == users.count }
            try await waitUntil { try await h.count("SELECT count(*)::int FROM health.pets WHERE state = 'vibrant'") == users.count }
            #expect(h.models.received(model: HealthBrainHarness.model).count == firstDay + users.count)
        }
    }

    /// With no model configured, Lantern's local brain decides from the same descriptors.
    @Test func withoutAModelTheLocalBrainDecides() async throws {
        try await HealthBrainHarness.run(start: Self.start) { h in
            let user = UUID()
            _ = try await h.upload(user, date: "2026-11-18", steps: 14_000, sleep: 8, hrv: 50)
            h.time.advance(by: Self.evening)
            try await waitUntil { try h.json(try await h.get("/v1/symbi/state", as: user))["source"] as? String == "local" }
            #expect(try h.json(try await h.get("/v1/symbi/state", as: user))["state"] as? String == "vibrant")
            #expect(h.models.received.isEmpty)
        }
    }

    /// Day 30 of Active or Vibrant, not 29, once: the event and the job, with the pet's stage; the worker's answer
    /// makes the form current, in the gallery, with a frame and a push, once however often it is redelivered.
    @Test func theThirtiethLivelyDayEvolvesThePet() async throws {
        try await HealthBrainHarness.run(start: Self.start) { h in
            // An account made as the test starts (identity's ids are UUIDv7): 30 days of it, each a lively one.
            let user = UUID.v7(at: h.time.now)
            for day in 0..<30 {
                if day > 0 { h.time.advance(by: 86_400) }
                let date = LocalDay(h.time.now, in: TimeZone(identifier: "Europe/Kyiv")!).description
                let response = try await h.upload(user, date: date, steps: 9_000 + day)
                #expect(try h.json(response)["activeDays"] as? Int == day + 1)
                let jobs = try await h.published(SymbiEvents.EvolutionRequested.eventType, on: SymbiEvents.EvolutionRequested.stream)
                if day == 28 { #expect(jobs.isEmpty) }
            }
            _ = try await h.upload(user, date: LocalDay(h.time.now, in: TimeZone(identifier: "Europe/Kyiv")!).description, steps: 20_000,
                                   recordedAt: h.time.now.addingTimeInterval(1))
            try await waitUntil { try await h.published(SymbiEvents.EvolutionRequested.eventType, on: SymbiEvents.EvolutionRequested.stream).count == 1 }
            try await Task.sleep(for: .milliseconds(200))
            let jobs = try await h.published(SymbiEvents.EvolutionRequested.eventType, on: SymbiEvents.EvolutionRequested.stream)
            #expect(jobs.count == 1)
            let job = try #require(try jobs.first?.payload(as: SymbiEvents.EvolutionRequested.self))
            #expect(job.stage == 1 && job.userId == user.lowercased && job.previousEvolutionId == nil)
            #expect(try await h.published(SymbiEvents.EvolutionTriggered.eventType, on: SymbiEvents.EvolutionTriggered.stream).count == 1)
            var gallery = try h.json(try await h.get("/v1/symbi/evolutions", as: user))["evolutions"] as? [[String: Any]] ?? []
            #expect(gallery.first?["status"] as? String == "drawing")

            // evolution-worker stores the picture, then announces it.
            let picture = Array("\u{89}PNG a picture evolution-worker drew".utf8)
            try Data(picture).write(to: URL(fileURLWithPath: try #require(h.variables["SYMBI_STORAGE_DIR"])).appendingPathComponent("\(job.evolutionId).png"))
            let evolved = SymbiEvents.Evolved(evolutionId: job.evolutionId, userId: user.lowercased, stage: 1, imageKey: "\(job.evolutionId).png",
                                              contentType: "image/png", width: 1024, height: 1024, generator: "local", evolvedAt: h.time.now)
            try await h.publish(evolved, producer: SymbiEvents.workerProducer)
            try await h.publish(evolved, producer: SymbiEvents.workerProducer)
            try await waitUntil { try h.json(try await h.get("/v1/symbi/state", as: user))["form"] != nil }
            gallery = try h.json(try await h.get("/v1/symbi/evolutions", as: user))["evolutions"] as? [[String: Any]] ?? []
            #expect(gallery.first?["status"] as? String == "ready" && gallery.first?["current"] as? Bool == true)
            // The picture, where the gallery says; cached for good, revalidated by its ETag; nobody else's.
            let url = try #require((gallery.first?["image"] as? [String: Any])?["url"] as? String)
            #expect(url == "/v1/symbi/evolutions/\(job.evolutionId)/image")
            let served = try await h.get(url, as: user)
            #expect(served.status == .ok && served.headers[.contentType] == "image/png" && Array(served.body.readableBytesView) == picture)
            #expect(served.headers[.cacheControl] == "private, max-age=31536000, immutable")
            let etag = try #require(served.headers[.eTag])
            #expect(try await h.get(url, as: user, extra: [.ifNoneMatch: etag]).status == .notModified)
            #expect(try await h.get(url, as: UUID()).status == .notFound)
            #expect(try await h.get("/v1/symbi/evolutions/not-an-id/image", as: user).status == .unprocessableContent)
            try await Task.sleep(for: .milliseconds(300))
            let pushes = try await h.published(PushRequest.eventType, on: PushRequest.stream)
                .compactMap { try? $0.payload(as: PushRequest.self) }.filter { $0.kind == PushMessage.symbiEvolved.key }
            #expect(pushes.count == 1)
        }
    }
}
