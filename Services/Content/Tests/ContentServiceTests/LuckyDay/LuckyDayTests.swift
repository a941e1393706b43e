import Foundation
import HTTPTypes
import HummingbirdTesting
import LanternContracts
import LanternCore
import LanternTestSupport
import Testing

@Suite("Lucky Day profile")
struct LuckyDayProfileTests {
    @Test("birth data → pillars from astrology with content's service token, nickname, poems, essence; the birth data is not stored")
    func createProfile() async throws {
        try await ContentHarness.run { h in
            let user = UUID()
            h.llm.forbid(user.uuidString.lowercased(), "Kyiv", "1990", "14:35")
            let profile = try await h.createProfile(user)
            #expect(profile.zodiac.animal == "Horse" && profile.zodiac.sign == "Metal Horse")
            #expect(profile.nickname.hasSuffix(" Metal Horse") && profile.nickname.split(separator: " ").count == 3)
            #expect(profile.pillars.map(\.role) == ["year", "month", "day", "hour"])
            #expect(profile.pillars.allSatisfy { !$0.poem.isEmpty && $0.poem.count <= 200 && !$0.assumed })
            #expect(profile.essence.count == 3 && profile.essence.allSatisfy { !$0.isEmpty })
            #expect(profile.dayMaster == "Yang Metal" && profile.birthTimeKnown && profile.limitations.isEmpty)
            #expect(profile.artisanal, "no model is configured: the local grammars wrote the texts")
            let sent = try #require(h.astrology.requests.first)
            #expect(sent.subject == "service:content")
            #expect(sent.body["date"] as? String == "1990-05-17" && sent.body["time"] as? String == "14:35")
            #expect((sent.body["place"] as? [String: Any])?["id"] as? Int == 703448)
            // Only derived descriptors are kept (Req 9).
            let stored = try await h.scalar("SELECT row_to_json(p)::text FROM content.luckyday_profiles p", as: String.self) ?? ""
            #expect(!stored.contains("1990") && !stored.contains("14:35") && !stored.contains("703448"))
            let again = try await h.request(.get, "/v1/fortunes/profile", as: user)
            #expect(try again.decode(ProfileBody.self).nickname == profile.nickname)
        }
    }

    @Test("the texts come from a model when one is configured, and its prompts hold no birth data")
    func modelTexts() async throws {
        try await ContentHarness.run(llm: ["LLM_MODELS": "gemini:gemini-2.5-flash"]) { h in
            let answer = #"{"nickname":"Quiet Metal Horse","poems":{"year":"Your Destiny rides a Metal Horse across open country.","month":"Fire and Metal meet in your Environment.","day":"Your Essence is a polished blade that rests in its sheath.","hour":"Water in your Inner Heart keeps the forge from burning hot."},"essence":["The Horse in you runs toward horizons.","Yang Metal at your core: clear and bright.","Much Metal, little Wood: let something grow."]}"#
            h.llm.script("gemini-2.5-flash", .ok(answer))
            let user = UUID()
            h.llm.forbid(user.uuidString.lowercased(), "Kyiv", "1990", "14:35", "703448", "Europe/Rome")
            let profile = try await h.createProfile(user)
            #expect(profile.nickname == "Quiet Metal Horse" && !profile.artisanal)
            #expect(profile.pillars.first { $0.role == "day" }?.poem == "Your Essence is a polished blade that rests in its sheath.")
            let prompt = try #require(h.llm.received.first?.prompt)
            #expect(prompt.contains("Chinese zodiac animal: Horse") && prompt.contains("Day master: Yang Metal"))
        }
    }

    @Test("unknown birth time: astrology is asked for noon, the hour pillar is marked assumed, and the profile says so")
    func unknownTime() async throws {
        try await ContentHarness.run { h in
            let profile = try await h.createProfile(UUID(), body: #"{"birth":{"date":"1990-05-17","time":null,"place":{"id":703448}},"timeZone":"Europe/Rome"}"#)
            #expect(h.astrology.requests.first?.body["time"] as? String == "12:00")
            #expect(!profile.birthTimeKnown && profile.pillars.first { $0.role == "hour" }?.assumed == true)
            #expect(profile.limitations.first?.contains("noon") == true)
        }
    }

    @Test("bad input is a 422 naming the field; astrology's own refusals come back under birth.", arguments: [
        (#"{"timeZone":"Europe/Rome"}"#, "birth"),
        (#"{"birth":{"place":{"id":1}},"timeZone":"Europe/Rome"}"#, "birth.date"),
        (#"{"birth":{"date":"1990-05-17"},"timeZone":"Europe/Rome"}"#, "birth.place"),
        (#"{"birth":{"date":"1990-05-17","place":{"id":1}}}"#, "timeZone"),
        (#"{"birth":{"date":"1990-05-17","place":{"id":1}},"timeZone":"Mars/Olympus"}"#, "timeZone"),
        (#"{"birth":{"date":"1890-05-17","place":{"id":1}},"timeZone":"Europe/Rome"}"#, "birth.date"),
        (#"{"birth":{"date":17,"place":{"id":1}},"timeZone":"Europe/Rome"}"#, "birth.date"),
    ])
    func badInput(body: String, field: String) async throws {
        try await ContentHarness.run { h in
            let response = try await h.request(.put, "/v1/fortunes/profile", as: UUID(), json: body)
            #expect(response.status == .unprocessableContent, "\(String(buffer: response.body))")
            let problem = try response.decode(ProblemBody.self)
            #expect(problem.errors?.contains { $0.field == field } == true, "\(String(buffer: response.body))")
        }
    }

    @Test("another app's token is refused with 403; no token with 401")
    func appOnly() async throws {
        try await ContentHarness.run { h in
            let response = try await h.request(.get, "/v1/fortunes/today", as: UUID(), app: .pairly)
            let problem = try response.decode(ProblemBody.self)
            #expect(response.status == .forbidden && problem.code == "fortunes_not_available")
            let anonymous = try await h.client.execute(uri: "/v1/fortunes/today", method: .get, headers: [:], body: nil)
            #expect(anonymous.status == .unauthorized)
        }
    }
}

@Suite("Lucky Day cookie")
struct LuckyDayCookieTests {
    @Test("closed → break (retry: same fortune) → a second break is refused with opensAgainAt → 24 h later closed again, one reminder")
    func dailyCycle() async throws {
        try await ContentHarness.run { h in
            let user = UUID()
            try await h.createProfile(user)
            let closed = try await h.request(.get, "/v1/fortunes/today", as: user).decode(CookieBody.self)
            #expect(closed.state == "closed" && closed.fortune == nil)

            let first = try await h.breakCookie(user, key: "k1")
            #expect(first.status == .ok, "\(String(buffer: first.body))")
            let opened = try first.decode(CookieBody.self)
            let fortune = try #require(opened.fortune)
            #expect(opened.state == "opened" && fortune.text.count <= 200 && fortune.artisanal)
            #expect(String(buffer: first.body).contains(fortune.id.uuidString.lowercased()), "ids are lower case")
            #expect(opened.opensAgainAt == ContentHarness.monday0900.addingTimeInterval(86_400))
            let retried = try await h.breakCookie(user, key: "k1").decode(CookieBody.self)
            #expect(retried == opened, "a retry must give the same fortune")

            let second = try await h.breakCookie(user, key: "k2")
            #expect(second.status == .conflict)
            let problem = try second.decode(ProblemBody.self)
            #expect(problem.code == "cookie_not_ready" && problem.opensAgainAt == "2026-11-24T08:00:00Z")
            #expect(second.headers[.retryAfter] == "86400")
            #expect(try await h.breakCookie(user).status == .conflict)
            #expect(try await h.events("fortune.revealed").count == 1)

            h.time.advance(by: 86_400)
            #expect(try await h.request(.get, "/v1/fortunes/today", as: user).decode(CookieBody.self).state == "closed")
            let reminded = try await eventually { try await h.pushJobs().filter { $0.userId == user.lowercased }.count == 1 }
            #expect(reminded)
            let push = try #require(try await h.pushJobs().first)
            #expect(push.messageKey == "luckyday.cookie_ready" && push.app == .luckyday && push.delivery == .alert)

            let next = try await h.breakCookie(user, key: "k3").decode(CookieBody.self)
            #expect(next.fortune?.text != fortune.text && next.fortune?.id != fortune.id)
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await h.pushJobs().count == 1, "a reminder went out twice")

            // The day after: the key of an earlier cookie is not a retry of this one.
            h.time.advance(by: 86_400)
            let reused = try await h.breakCookie(user, key: "k1")
            let reusedProblem = try reused.decode(ProblemBody.self)
            #expect(reused.status == .unprocessableContent && reusedProblem.code == "idempotency_key_reused")
            #expect(try await h.breakCookie(user, key: "k4").status == .ok)
        }
    }

    @Test("a cookie opened offline is recorded with its opening time: the lock runs from then, no second cookie that day; too old or ahead is a 422 naming openedAt (#44 item 5, Req 7.4)")
    func openedOffline() async throws {
        try await ContentHarness.run { h in
            let user = UUID()
            try await h.createProfile(user)
            func breaking(_ json: String, key: String) async throws -> TestResponse {
                try await h.request(.post, "/v1/fortunes/today/break", as: user, json: json, headers: [.init("Idempotency-Key")!: key])
            }
            let opened = ContentHarness.monday0900.addingTimeInterval(-5 * 3600)  // 03:00Z, on the plane
            let iso = ISO8601DateFormatter()
            for (json, field) in [(#"{"openedAt":"\#(iso.string(from: opened.addingTimeInterval(-20 * 3600)))"}"#, "openedAt"),
                                  (#"{"openedAt":"\#(iso.string(from: ContentHarness.monday0900.addingTimeInterval(3600)))"}"#, "openedAt")] {
                let refused = try await breaking(json, key: UUID().uuidString)
                #expect(refused.status == .unprocessableContent && String(buffer: refused.body).contains(#""field":"\#(field)""#), "\(String(buffer: refused.body))")
            }
            let synced = try await breaking(#"{"openedAt":"\#(iso.string(from: opened))"}"#, key: "offline-1")
            #expect(synced.status == .ok, "\(String(buffer: synced.body))")
            let cookie = try synced.decode(CookieBody.self)
            #expect(cookie.fortune?.revealedAt == opened && cookie.opensAgainAt == opened.addingTimeInterval(86_400))
            // Online again the same day: the server offers no second cookie; it opens 24 hours after the offline one.
            let again = try await h.breakCookie(user, key: "online-1")
            #expect(try again.status == .conflict && again.decode(ProblemBody.self).opensAgainAt == "2026-11-24T03:00:00Z")
        }
    }

    @Test("two replicas and a restart: breaks are serialised per user, and each reminder is sent once")
    func twoReplicas() async throws {
        try await ContentHarness.run { h in
            let users = (0..<4).map { _ in UUID() }
            for user in users { try await h.createProfile(user) }
            try await h.replica { other in
                for user in users {
                    async let a = h.breakCookie(user, key: "a-\(user)")
                    async let b = h.breakCookie(user, key: "b-\(user)", on: other)
                    let statuses = try await [a.status, b.status]
                    #expect(statuses.sorted { $0.code < $1.code } == [.ok, .conflict], "\(statuses)")
                }
            }
            // The second replica has stopped; a new one starts (a restart) before the reminders fall due.
            try await h.replica { _ in
                h.time.advance(by: 86_400)
                let all = try await eventually { try await h.pushJobs().count >= users.count }
                #expect(all)
                try await Task.sleep(for: .milliseconds(500))
                let jobs = try await h.pushJobs()
                #expect(jobs.count == users.count && Set(jobs.map(\.userId)) == Set(users.map(\.lowercased)))
            }
        }
    }

    @Test("five parallel breaks with different keys reveal one fortune; five with one key all get that one")
    func parallelBreaks() async throws {
        try await ContentHarness.run { h in
            let (different, same) = (UUID(), UUID())
            try await h.createProfile(different)
            try await h.createProfile(same)
            try await h.replica { other in
                let answers = try await withThrowingTaskGroup(of: (HTTPResponse.Status, CookieBody?).self) { group in
                    for index in 0..<5 {
                        group.addTask {
                            let response = try await h.breakCookie(different, key: "k\(index)", on: index.isMultiple(of: 2) ? nil : other)
                            return (response.status, response.status == .ok ? try response.decode(CookieBody.self) : nil)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(answers.map(\.0).filter { $0 == .ok }.count == 1 && answers.map(\.0).filter { $0 == .conflict }.count == 4,
                        "\(answers.map(\.0))")
                let repeated = try await withThrowingTaskGroup(of: CookieBody.self) { group in
                    for index in 0..<5 { group.addTask { try await h.breakCookie(same, key: "one", on: index.isMultiple(of: 2) ? nil : other).decode(CookieBody.self) } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(Set(repeated.compactMap(\.fortune?.id)).count == 1 && repeated.allSatisfy { $0.state == "opened" })
            }
            #expect(try await h.count("SELECT count(*) FROM content.fortunes WHERE user_id = '\(different)'") == 1)
            #expect(try await h.count("SELECT count(*) FROM content.fortunes WHERE user_id = '\(same)'") == 1)
            #expect(try await eventually { try await h.events("fortune.revealed").count >= 2 })
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await h.events("fortune.revealed").count == 2)
        }
    }

    @Test("a fortune the user already had is not given again: the next hand-written one is")
    func duplicateText() async throws {
        try await ContentHarness.run { h in
            let text = "The same quiet wind finds you twice, and twice you let it pass."
            let user = UUID()
            try await h.createProfile(user)
            // As a model that writes the same words every day would: the made-ahead fortune is those words each time.
            _ = try await eventually { try await h.count("SELECT count(*) FROM content.next_fortunes") == 1 }
            try await h.execute("UPDATE content.next_fortunes SET text = '\(text)', artisanal = false, source = 'gemini:repeats', pool_position = NULL")
            let first = try await h.breakCookie(user, key: "d1").decode(CookieBody.self)
            #expect(first.fortune?.text == text)
            h.time.advance(by: 86_400)
            _ = try await eventually { try await h.count("SELECT count(*) FROM content.next_fortunes") == 1 }
            try await h.execute("UPDATE content.next_fortunes SET text = '\(text)', artisanal = false, source = 'gemini:repeats', pool_position = NULL")
            let second = try await h.breakCookie(user, key: "d2").decode(CookieBody.self)
            #expect(second.fortune?.text != text && second.fortune?.artisanal == true, "\(String(describing: second.fortune))")
            #expect(try await h.count("SELECT count(*) FROM content.fortunes WHERE user_id = '\(user)'") == 2)
        }
    }

    @Test("no profile yet: breaking is a 409 profile_required")
    func noProfile() async throws {
        try await ContentHarness.run { h in
            let response = try await h.breakCookie(UUID())
            let problem = try response.decode(ProblemBody.self)
            #expect(response.status == .conflict && problem.code == "profile_required")
        }
    }

    @Test("a model that is too slow: the break answers within the budget with an artisanal fortune")
    func slowModel() async throws {
        try await ContentHarness.run(llm: ["LLM_MODELS": "gemini:slow"], extra: ["FORTUNE_BUDGET_SECONDS": "2", "PROFILE_BUDGET_SECONDS": "2", "PREGENERATION_BUDGET_SECONDS": "0.2"]) { h in
            // The model never answers while the test runs: a break that waited for it would not come back.
            h.llm.script("slow", .hang)
            let user = UUID()
            try await h.createProfile(user)
            let response = try await h.breakCookie(user)
            #expect(try response.decode(CookieBody.self).fortune?.artisanal == true)
            // Asked, even if a loaded machine delivers the calls to the fake after the budget gave up on them.
            #expect(try await eventually { h.llm.received(model: "slow").count >= 2 }, "the profile and the break asked the model first")
        }
    }

    @Test("a fortune made ahead by a model is the one revealed, at once, even when the model has become slow")
    func pregenerated() async throws {
        try await ContentHarness.run(llm: ["LLM_MODELS": "gemini:m"]) { h in
            h.llm.script("m", .ok(#"{"nickname":"Quiet Metal Horse","poems":{},"essence":[]}"#), .ok("A quiet wind on a Metal day carries your patience further than haste could."))
            let user = UUID()
            h.llm.forbid(user.uuidString.lowercased(), "Kyiv", "1990")
            try await h.createProfile(user)
            let made = try await eventually { try await h.count("SELECT count(*) FROM content.next_fortunes WHERE artisanal = false") == 1 }
            #expect(made)
            // The model now hangs: a break that asked it would end artisanal after its budget.
            h.llm.script("m", .hang)
            let fortune = try await h.breakCookie(user).decode(CookieBody.self).fortune
            #expect(fortune?.text == "A quiet wind on a Metal day carries your patience further than haste could." && fortune?.artisanal == false)
            let prompt = try #require(h.llm.received.last?.prompt)
            #expect(prompt.contains("Element of today: ") && prompt.contains("Weekday: "))
        }
    }

    @Test("the widget: the cookie's state with an ETag, 304 for If-None-Match, cacheable while open")
    func widget() async throws {
        try await ContentHarness.run { h in
            let user = UUID()
            try await h.createProfile(user)
            let closed = try await h.request(.get, "/v1/widgets/luckyday", as: user)
            #expect(closed.status == .ok && closed.headers[.cacheControl] == "private, no-cache")
            let etag = try #require(closed.headers[.eTag])
            let same = try await h.request(.get, "/v1/widgets/luckyday", as: user, headers: [.ifNoneMatch: etag])
            #expect(same.status == .notModified && same.body.readableBytes == 0)
            _ = try await h.breakCookie(user)
            let open = try await h.request(.get, "/v1/widgets/luckyday", as: user, headers: [.ifNoneMatch: etag])
            #expect(open.status == .ok && open.headers[.cacheControl] == "private, max-age=86400")
            #expect(try open.decode(CookieBody.self).state == "opened")
        }
    }

    @Test("user.deleted erases the profile, the fortunes and the schedules")
    func deletion() async throws {
        try await ContentHarness.run { h in
            let user = UUID()
            try await h.createProfile(user)
            _ = try await h.breakCookie(user)
            try await h.identityEvent("user.deleted", subject: user, data: .object(["userId": .string(user.lowercased), "app": .string("luckyday")]))
            let erased = try await eventually(timeout: .seconds(30)) {
                try await h.count("""
                    SELECT (SELECT count(*) FROM content.luckyday_profiles) + (SELECT count(*) FROM content.fortunes) + \
                    (SELECT count(*) FROM content.reminders) + (SELECT count(*) FROM content.pregeneration) + (SELECT count(*) FROM content.next_fortunes)
                    """) == 0
            }
            #expect(erased)
            #expect(try await h.request(.get, "/v1/fortunes/profile", as: user).status == .notFound)
        }
    }
}

@Suite("LLM metrics on the operations port's /metrics")
struct LLMMetricsTests {
    @Test("calls, failures by reason, fallbacks, latency and tokens per provider, model and task")
    func metrics() async throws {
        let operations = try OperationsPort()
        try await ContentHarness.run(llm: ["LLM_MODELS": "gemini:metrics-sick,gemini:metrics-well", "LLM_ATTEMPTS_PER_MODEL": "1"],
                                     extra: operations.variables) { h in
            h.llm.script("metrics-sick", .serverError(503))
            h.llm.script("metrics-well", .ok(#"{"nickname":"Quiet Metal Horse","poems":{},"essence":[]}"#))
            try await h.createProfile(UUID())
            #expect(try await h.client.execute(uri: "/metrics", method: .get, headers: [:], body: nil).status == .notFound)
            let text = try await operations.get("/metrics").body
            let lines = text.split(separator: "\n").filter { $0.contains("metrics-") }
            func has(_ name: String, _ parts: String...) -> Bool {
                lines.contains { $0.hasPrefix(name) && parts.allSatisfy($0.contains) }
            }
            #expect(has("lantern_llm_calls_total", #"model="metrics-sick""#, #"outcome="unavailable""#, #"task="profile""#), "\(lines)")
            #expect(has("lantern_llm_calls_total", #"model="metrics-well""#, #"outcome="ok""#, #"provider="gemini""#))
            #expect(has("lantern_llm_fallbacks_total", #"to="gemini:metrics-well""#))
            #expect(has("lantern_llm_call_duration_seconds", #"model="metrics-well""#))
            #expect(has("lantern_llm_tokens_total", #"model="metrics-well""#, #"kind="prompt""#))
            #expect(text.contains("lantern_luckyday_profiles_saved_total"))
        }
    }
}
