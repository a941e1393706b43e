import Foundation
import HTTPTypes
import HummingbirdTesting
import LanternContracts
import LanternCore
import LanternEvents
import LanternLLM
import LanternTestSupport
@testable import RoastMeLaterContent
import Testing

/// A roast as the API answers it (decoded independently of the service's own types).
struct RoastBody: Decodable, Equatable {
    struct Reaction: Decodable, Equatable { var name: String; var emoji: String }
    var id: String
    var text: String
    var category: String
    var spice: Int
    var mood: String?
    var language: String
    var artisanal: Bool
    var localDate: String
    var favourite: Bool
    var reaction: Reaction?
    var shareText: String
}

struct RoastPageBody: Decodable {
    var roasts: [RoastBody]
    var nextCursor: String?
}

extension ContentHarness {
    func roast(_ user: UUID, _ json: String, key: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let key { headers[.init("Idempotency-Key")!] = key }
        return try await request(.post, "/v1/roasts", as: user, app: .roastmelater, json: json, headers: headers)
    }

    func roasted(_ user: UUID, _ json: String) async throws -> RoastBody {
        let response = try await roast(user, json)
        #expect(response.status == .created, "\(String(buffer: response.body))")
        return try response.decode(RoastBody.self)
    }
}

@Suite("RoastMeLater roasts")
struct RoastsTests {
    static let categories = ["meetings", "deadlines", "email", "coworkers", "boss", "remote", "tech", "office"]
    static let moods = ["stressed", "frustrated", "bored", "tired", "annoyed"]

    @Test("every category, spice level and mood reaches the model's prompt, with the mood's modifier; nothing of the user does")
    func prompts() async throws {
        try await ContentHarness.run(llm: ["LLM_MODELS": "gemini:gemini-2.5-flash"]) { h in
            let user = UUID()
            h.llm.forbid(user.uuidString.lowercased())
            let catalogue = try RoastMeLaterContent.catalogue()
            for (n, category) in Self.categories.enumerated() {
                let spice = n % 5 + 1, mood = Self.moods[n % 5]
                let roast = try await h.roasted(user, #"{"category":"\#(category)","spice":\#(spice),"mood":"\#(mood)","timeZone":"Asia/Ho_Chi_Minh"}"#)
                #expect(!roast.artisanal && roast.text == FakeLLMServers.defaultText && roast.category == category && roast.spice == spice)
                let prompt = try #require(h.llm.received.last?.prompt)
                #expect(prompt.contains("Category: \(category)") && prompt.contains("Spice level (1 gentle to 5 savage): \(spice)"), "\(prompt)")
                let modifier = try #require(catalogue.mood(mood)?.modifier)
                #expect(prompt.contains("The reader's mood: \(mood)") && prompt.contains("Tone for that mood: \(modifier)"), "\(prompt)")
                #expect(try prompt.contains("How sharp: \(#require(catalogue.spice(spice)?.modifier))"))
            }
            // Without a mood the prompt says none and asks for no mood's tone.
            _ = try await h.roasted(user, #"{"category":"tech","spice":3}"#)
            let plain = try #require(h.llm.received.last?.prompt)
            #expect(plain.contains("The reader's mood: none") && !plain.contains("Tone for that mood"))
            #expect(h.llm.privacyViolations.isEmpty, "\(h.llm.privacyViolations)")
        }
    }

    @Test("Vietnamese: the model's Vietnamese roast is kept; an answer in English is refused and the local grammar writes in Vietnamese")
    func vietnamese() async throws {
        try await ContentHarness.run(llm: ["LLM_MODELS": "gemini:gemini-2.5-flash"]) { h in
            let vietnamese = "Cuộc họp này lẽ ra chỉ cần một email, nhưng bạn vẫn ngồi đây gật gù như đang hiểu hết mọi thứ."
            h.llm.script("gemini-2.5-flash", .ok(vietnamese), .ok("This meeting could have been an email, and you know it."))
            let user = UUID()
            let first = try await h.roasted(user, #"{"category":"meetings","spice":2,"language":"vi"}"#)
            #expect(first.text == vietnamese && !first.artisanal && first.language == "vi")
            #expect(h.llm.received.last?.system.contains("in Vietnamese") == true)
            #expect(first.shareText.hasPrefix(vietnamese) && first.shareText.contains("Được roast bởi RoastMeLater · https://roastmelater.app"))
            let second = try await h.roasted(user, #"{"category":"meetings","spice":2,"language":"vi"}"#)
            #expect(second.artisanal && second.language == "vi")
            #expect(LanguageCheck.problem(second.text, expected: .vietnamese) == nil, "\(second.text)")
        }
    }

    @Test("with no model the local grammar writes every category, heat and mood in both languages, within 220 characters, naming no one")
    func localGrammar() async throws {
        let catalogue = try RoastMeLaterContent.catalogue()
        let writer = RoastWriter(generator: NoGenerator(), local: LocalGenerator(grammars: try ContentHarnessGrammars.roasts()))
        var seen: [RoastLanguage: Set<String>] = [:]
        var longest = ""
        for language in RoastLanguage.allCases {
            for category in catalogue.categories {
                for spice in catalogue.spice {
                    for mood in [nil] + catalogue.moods {
                        let order = RoastOrder(category: category, spice: spice, mood: mood, language: language, timeZone: .gmt)
                        for _ in 0..<4 {
                            let roast = writer.artisanal(order, user: UUID(), roast: UUID())
                            #expect(roast.artisanal && roast.source == "local")
                            #expect(roast.text.count <= RoastWriter.maxCharacters, "\(roast.text)")
                            #expect(NameGuard.name(in: roast.text) == nil, "\(roast.text)")
                            #expect(LanguageCheck.problem(roast.text, expected: language.textLanguage) == nil, "\(language): \(roast.text)")
                            #expect(Blocklist.standard.firstHit(in: roast.text) == nil, "\(roast.text)")
                            seen[language, default: []].insert(roast.text)
                            if roast.text.count > longest.count { longest = roast.text }
                        }
                    }
                }
            }
        }
        #expect((seen[.en]?.count ?? 0) > 500 && (seen[.vi]?.count ?? 0) > 500, "variety: \(seen.mapValues(\.count))")
        print("local roasts: \(seen.mapValues(\.count)) distinct; longest (\(longest.count)): \(longest)")
    }

    @Test("a model's roast that names someone is set aside for the local grammar's")
    func names() async throws {
        #expect(NameGuard.name(in: "Monday again. Your inbox has more unread mail than a post office.") == nil)
        #expect(NameGuard.name(in: "Deep breath: the CEO's quick sync is only an hour. I believe in you.") == nil)
        #expect(NameGuard.name(in: "Even Kevin from accounting mutes himself better than you.") == "Kevin")
        #expect(NameGuard.name(in: "Thứ Hai rồi. Hộp thư của bạn còn dài hơn cả danh sách việc cần làm.") == nil)
        #expect(NameGuard.name(in: "Sếp của bạn nói giống hệt anh Tuấn phòng bên.") == "Tuấn")
        try await ContentHarness.run(llm: ["LLM_MODELS": "gemini:gemini-2.5-flash"]) { h in
            h.llm.script("gemini-2.5-flash", .ok("Your standup is longer than anything Elon Musk ever tweeted."))
            let roast = try await h.roasted(UUID(), #"{"category":"meetings","spice":4}"#)
            #expect(roast.artisanal && !roast.text.contains("Musk"))
        }
    }

    @Test("bad input is a 422 naming each field; another app's token is a 403")
    func validation() async throws {
        try await ContentHarness.run { h in
            let user = UUID()
            let cases: [(String, String)] = [
                (#"{"spice":3}"#, "category"), (#"{"category":"karaoke","spice":3}"#, "category"), (#"{"category":"tech"}"#, "spice"),
                (#"{"category":"tech","spice":6}"#, "spice"), (#"{"category":"tech","spice":0}"#, "spice"),
                (#"{"category":"tech","spice":3,"mood":"sleepy"}"#, "mood"), (#"{"category":"tech","spice":3,"language":"fr"}"#, "language"),
                (#"{"category":"tech","spice":3,"timeZone":"Mars/Olympus"}"#, "timeZone"), (#"{"category":"tech","spice":"hot"}"#, "spice"),
            ]
            for (json, field) in cases {
                let response = try await h.roast(user, json)
                #expect(response.status == .unprocessableContent, "\(json)")
                let problem = try response.decode(ProblemBody.self)
                #expect(problem.errors?.map(\.field).contains(field) == true, "\(json): \(String(buffer: response.body))")
            }
            let other = try await h.request(.post, "/v1/roasts", as: user, app: .luckyday, json: #"{"category":"tech","spice":3}"#)
            #expect(try other.status == .forbidden && (other.decode(ProblemBody.self)).code == "roasts_not_available")
            let history = try await h.request(.get, "/v1/roasts?limit=0&favourite=maybe", as: user, app: .roastmelater)
            #expect(try Set(history.decode(ProblemBody.self).errors?.map(\.field) ?? []) == ["limit", "favourite"])
        }
    }

    @Test("the Premium Roast category is refused until gamification grants premium_roasts, then written; the catalogue says which")
    func premium() async throws {
        try await ContentHarness.run { h in
            let user = UUID()
            let refused = try await h.roast(user, #"{"category":"premium","spice":5}"#)
            #expect(refused.status == .forbidden)
            let problem = try refused.decode(ProblemBody.self)
            #expect(problem.code == "premium_locked" && problem.errors?.first?.field == "category")
            struct Catalogue: Decodable { struct Category: Decodable { var id: String; var premium: Bool; var unlocked: Bool }; var categories: [Category] }
            let locked = try await h.request(.get, "/v1/roasts/catalogue", as: user, app: .roastmelater).decode(Catalogue.self)
            #expect(locked.categories.count == 9 && locked.categories.first { $0.id == "premium" }?.unlocked == false)
            #expect(locked.categories.filter { !$0.premium }.allSatisfy { $0.unlocked })

            // Another app's reward and a reward for someone else unlock nothing.
            let granted = GamificationEvents.RewardUnlocked(userId: user.lowercased, app: .roastmelater, reward: "premium_roasts", unlockedAt: h.time.now)
            for payload in [GamificationEvents.RewardUnlocked(userId: user.lowercased, app: .symbi, reward: "premium_roasts", unlockedAt: h.time.now),
                            GamificationEvents.RewardUnlocked(userId: UUID().lowercased, app: .roastmelater, reward: "premium_roasts", unlockedAt: h.time.now),
                            granted] {
                let event = try EventEnvelope(payload, producer: "gamification", subject: payload.userId, occurredAt: h.time.now)
                try await EventPublisher(redis: h.redis).publish(event, to: h.streams.events("gamification"))
            }
            #expect(try await eventually { try await h.roast(user, #"{"category":"premium","spice":5}"#).status == .created })
            #expect(try await h.count("SELECT count(*)::int FROM content.roast_rewards") == 2)
            let unlocked = try await h.request(.get, "/v1/roasts/catalogue", as: user, app: .roastmelater)
            #expect(try unlocked.decode(Catalogue.self).categories.first { $0.id == "premium" }?.unlocked == true)
            let etag = try #require(unlocked.headers[.eTag])
            let same = try await h.request(.get, "/v1/roasts/catalogue", as: user, app: .roastmelater, headers: [.ifNoneMatch: etag])
            #expect(same.status == .notModified)
        }
    }

    @Test("a retried roast with the same Idempotency-Key is the same roast, announced once with its local date; the key for another order is a 422")
    func retries() async throws {
        try await ContentHarness.run { h in
            let user = UUID(), key = UUID().uuidString
            // Monday 23 November 2026 08:00 UTC is already 15:00 in Hanoi; at 20:00 UTC it is Tuesday there.
            h.time.advance(by: 12 * 3600)
            let body = #"{"category":"email","spice":2,"mood":"tired","language":"vi","timeZone":"Asia/Ho_Chi_Minh"}"#
            let first = try await h.roast(user, body, key: key)
            #expect(first.status == .created)
            let again = try await h.roast(user, body, key: key)
            #expect(again.status == .ok)
            #expect(try again.decode(RoastBody.self) == first.decode(RoastBody.self))
            let other = try await h.roast(user, #"{"category":"boss","spice":2}"#, key: key)
            #expect(try other.status == .unprocessableContent && (other.decode(ProblemBody.self)).code == "idempotency_key_reused")
            // The relay publishes after the commit, asynchronously: wait for the event, then check it came once.
            _ = try await eventually { try await h.events("roast.generated").count >= 1 }
            let events = try await h.events("roast.generated")
            #expect(events.count == 1)
            let generated = try #require(events.first).payload(as: ContentEvents.RoastGenerated.self)
            #expect(generated.localDate == "2026-11-24" && generated.category == "email" && generated.mood == "tired" && generated.language == "vi")
            #expect(try first.decode(RoastBody.self).localDate == "2026-11-24")
        }
    }

    @Test("history: newest first, filtered by mood, category, reaction and favourite, paged by cursor; favourites and reactions announced once per change")
    func history() async throws {
        try await ContentHarness.run { h in
            let user = UUID()
            var ids: [String] = []
            for n in 0..<7 {
                let mood = n % 2 == 0 ? #","mood":"bored""# : ""
                ids.append(try await h.roasted(user, #"{"category":"\#(n < 4 ? "tech" : "boss")","spice":\#(n % 5 + 1)\#(mood)}"#).id)
                h.time.advance(by: 1)
            }
            let stranger = try await h.roasted(UUID(), #"{"category":"tech","spice":1}"#)

            let all = try await h.request(.get, "/v1/roasts?limit=3", as: user, app: .roastmelater).decode(RoastPageBody.self)
            #expect(all.roasts.map(\.id) == Array(ids.reversed().prefix(3)))
            let cursor = try #require(all.nextCursor)
            let next = try await h.request(.get, "/v1/roasts?limit=3&cursor=\(cursor)", as: user, app: .roastmelater).decode(RoastPageBody.self)
            #expect(next.roasts.map(\.id) == Array(ids.reversed().dropFirst(3).prefix(3)))

            let bored = try await h.request(.get, "/v1/roasts?mood=bored&category=tech", as: user, app: .roastmelater).decode(RoastPageBody.self)
            #expect(bored.roasts.map(\.id) == [ids[2], ids[0]] && bored.nextCursor == nil)

            let favourite = try await h.request(.put, "/v1/roasts/\(ids[1])/favourite", as: user, app: .roastmelater)
            #expect(try favourite.status == .ok && (favourite.decode(RoastBody.self)).favourite)
            _ = try await h.request(.put, "/v1/roasts/\(ids[1])/favourite", as: user, app: .roastmelater)
            let reacted = try await h.request(.put, "/v1/roasts/\(ids[5])/reaction", as: user, app: .roastmelater, json: #"{"reaction":"🔥"}"#)
            #expect(try reacted.decode(RoastBody.self).reaction == .init(name: "fire", emoji: "🔥"))
            _ = try await h.request(.put, "/v1/roasts/\(ids[5])/reaction", as: user, app: .roastmelater, json: #"{"reaction":"fire"}"#)
            _ = try await h.request(.put, "/v1/roasts/\(ids[6])/reaction", as: user, app: .roastmelater, json: #"{"reaction":"dislike"}"#)
            let removed = try await h.request(.delete, "/v1/roasts/\(ids[6])/reaction", as: user, app: .roastmelater)
            #expect(try removed.decode(RoastBody.self).reaction == nil)
            let bad = try await h.request(.put, "/v1/roasts/\(ids[6])/reaction", as: user, app: .roastmelater, json: #"{"reaction":"🎉"}"#)
            #expect(try bad.status == .unprocessableContent && (bad.decode(ProblemBody.self)).errors?.first?.field == "reaction")

            let favourites = try await h.request(.get, "/v1/roasts?favourite=true", as: user, app: .roastmelater).decode(RoastPageBody.self)
            #expect(favourites.roasts.map(\.id) == [ids[1]])
            let fire = try await h.request(.get, "/v1/roasts?reaction=%F0%9F%94%A5", as: user, app: .roastmelater).decode(RoastPageBody.self)
            #expect(fire.roasts.map(\.id) == [ids[5]])
            // The relay publishes after each commit, asynchronously: wait for all three reactions.
            #expect(try await eventually { try await h.events("roast.reacted").count == 3 })
            #expect(try await h.events("roast.favourited").count == 1)
            let reactions = try await h.events("roast.reacted").map { try $0.payload(as: ContentEvents.RoastReacted.self) }
            #expect(reactions.map(\.reaction) == ["fire", "dislike", nil] && reactions.first?.category == "boss")

            // Another user's roast does not exist for this one.
            for (method, path) in [(HTTPRequest.Method.get, ""), (.put, "/favourite"), (.delete, "/reaction")] {
                let response = try await h.request(method, "/v1/roasts/\(stranger.id)\(path)", as: user, app: .roastmelater)
                #expect(try response.status == .notFound && (response.decode(ProblemBody.self)).code == "roast_not_found")
            }
            let one = try await h.request(.get, "/v1/roasts/\(ids[3])", as: user, app: .roastmelater).decode(RoastBody.self)
            #expect(one.shareText.hasPrefix(one.text) && one.shareText.hasSuffix("Roasted by RoastMeLater · https://roastmelater.app"))
        }
    }

    @Test("reactions teach: two 👎 in a category tone that category down in this user's prompt, their 🔥 roasts become its examples; another user's prompt learns nothing")
    func reactionsTeach() async throws {
        try await ContentHarness.run(llm: ["LLM_MODELS": "gemini:gemini-2.5-flash"]) { h in
            let texts = ["Your calendar is a puzzle you keep losing.", "Another meeting about the last meeting, what a treat.",
                         "Your standup has a sequel and nobody asked for it.", "The printer jams only when the deadline is near.",
                         "You know the Wi-Fi password better than your own goals."]
            h.llm.script("gemini-2.5-flash", .ok(texts[0]), .ok(texts[1]), .ok(texts[2]), .ok(texts[3]), .ok(texts[4]))
            let user = UUID(), other = UUID()
            var roasts: [RoastBody] = []
            for category in ["meetings", "meetings", "meetings", "tech"] {
                roasts.append(try await h.roasted(user, #"{"category":"\#(category)","spice":5}"#))
            }
            #expect(roasts.map(\.text) == Array(texts.prefix(4)))
            for roast in roasts.prefix(2) {
                _ = try await h.request(.put, "/v1/roasts/\(roast.id)/reaction", as: user, app: .roastmelater, json: #"{"reaction":"👎"}"#)
            }
            _ = try await h.request(.put, "/v1/roasts/\(roasts[3].id)/reaction", as: user, app: .roastmelater, json: #"{"reaction":"🔥"}"#)

            _ = try await h.roasted(user, #"{"category":"meetings","spice":5}"#)
            let taught = try #require(h.llm.received.last?.prompt)
            #expect(taught.contains("Feedback on this category: The reader disliked 2 of their latest roasts here"), "\(taught)")
            #expect(taught.contains("Heat: medium"), "spice 5 is hot; toned down one band: \(taught)")
            #expect(taught.contains("A roast this reader loved (match its spirit, do not repeat it): \(texts[3])"), "\(taught)")

            _ = try await h.roasted(user, #"{"category":"tech","spice":5}"#)
            let tech = try #require(h.llm.received.last?.prompt)
            #expect(!tech.contains("Feedback on this category") && tech.contains("Heat: hot") && tech.contains(texts[3]))

            _ = try await h.roasted(other, #"{"category":"meetings","spice":5}"#)
            let stranger = try #require(h.llm.received.last?.prompt)
            #expect(!stranger.contains("Feedback") && !stranger.contains("loved"), "\(stranger)")
            #expect(h.llm.privacyViolations.isEmpty)
        }
    }

    @Test("Your Roast Stats counts the user's reactions, moods and categories; the export holds every roast with its reaction")
    func statsAndExport() async throws {
        try await ContentHarness.run { h in
            let user = UUID()
            let a = try await h.roasted(user, #"{"category":"tech","spice":1,"mood":"tired"}"#)
            h.time.advance(by: 1)  // ids are UUID version 7: in time order from one millisecond to the next
            let b = try await h.roasted(user, #"{"category":"tech","spice":2}"#)
            h.time.advance(by: 1)
            _ = try await h.roasted(user, #"{"category":"boss","spice":3,"mood":"tired","language":"vi"}"#)
            _ = try await h.roasted(UUID(), #"{"category":"boss","spice":3}"#)
            _ = try await h.request(.put, "/v1/roasts/\(a.id)/reaction", as: user, app: .roastmelater, json: #"{"reaction":"hilarious"}"#)
            _ = try await h.request(.put, "/v1/roasts/\(b.id)/favourite", as: user, app: .roastmelater)
            struct Stats: Decodable { var total: Int; var favourites: Int; var reactions: [String: Int]; var moods: [String: Int]; var categories: [String: Int] }
            let stats = try await h.request(.get, "/v1/roasts/stats", as: user, app: .roastmelater).decode(Stats.self)
            #expect(stats.total == 3 && stats.favourites == 1 && stats.reactions == ["hilarious": 1])
            #expect(stats.moods == ["tired": 2, "none": 1] && stats.categories == ["tech": 2, "boss": 1])

            let export = try await h.request(.get, "/v1/roasts/export", as: user, app: .roastmelater)
            #expect(export.headers[.contentDisposition]?.contains("attachment") == true)
            struct Export: Decodable { var app: String; var roasts: [RoastBody] }
            let file = try export.decode(Export.self)
            #expect(file.app == "roastmelater" && file.roasts.count == 3 && file.roasts.first?.id == a.id)
            #expect(file.roasts.first?.reaction?.name == "hilarious" && file.roasts[1].favourite)
        }
    }

    @Test("user.deleted erases the user's roasts, reactions, favourites, rewards and streak copy, and no one else's; gamification's events still on their way bring none of it back")
    func deletion() async throws {
        try await ContentHarness.run { h in
            let user = UUID(), other = UUID()
            let roast = try await h.roasted(user, #"{"category":"office","spice":3}"#)
            _ = try await h.request(.put, "/v1/roasts/\(roast.id)/favourite", as: user, app: .roastmelater)
            _ = try await h.roasted(other, #"{"category":"office","spice":3}"#)
            func fromGamification(_ payload: some EventPayload, about subject: UUID) async throws {
                let event = try EventEnvelope(payload, producer: "gamification", subject: subject.lowercased, occurredAt: h.time.now)
                try await EventPublisher(redis: h.redis).publish(event, to: h.streams.events("gamification"))
            }
            for subject in [user, other] {
                try await fromGamification(GamificationEvents.RewardUnlocked(userId: subject.lowercased, app: .roastmelater, reward: "premium_roasts",
                                                                             unlockedAt: h.time.now), about: subject)
                try await fromGamification(GamificationEvents.StreakChanged(userId: subject.lowercased, app: .roastmelater, current: 7, longest: 7,
                                                                            lastActiveDay: "2026-11-23", updatedAt: h.time.now), about: subject)
            }
            let mine = "WHERE user_id = '\(user.lowercased)'"
            #expect(try await eventually { try await h.count("SELECT count(*)::int FROM content.roast_streaks \(mine)") == 1 })
            #expect(try await eventually { try await h.count("SELECT count(*)::int FROM content.roast_rewards \(mine)") == 1 })
            try await h.identityEvent("user.deleted", subject: user, data: .object(["userId": .string(user.lowercased), "app": .string("roastmelater")]))
            #expect(try await eventually { try await h.count("SELECT count(*)::int FROM content.roasts \(mine)") == 0 })
            #expect(try await h.count("SELECT count(*)::int FROM content.roast_streaks \(mine)") == 0)
            #expect(try await h.count("SELECT count(*)::int FROM content.roast_rewards \(mine)") == 0)
            #expect(try await h.count("SELECT count(*)::int FROM content.roasts") == 1)

            // A newer streak and the reward, published before the deletion reached gamification, arrive afterwards.
            try await fromGamification(GamificationEvents.StreakChanged(userId: user.lowercased, app: .roastmelater, current: 8, longest: 8,
                                                                        lastActiveDay: "2026-11-24", updatedAt: h.time.now.addingTimeInterval(60)), about: user)
            try await fromGamification(GamificationEvents.RewardUnlocked(userId: user.lowercased, app: .roastmelater, reward: "premium_roasts",
                                                                         unlockedAt: h.time.now), about: user)
            // The other user's newer streak, published after them, is the sign both were handled.
            try await fromGamification(GamificationEvents.StreakChanged(userId: other.lowercased, app: .roastmelater, current: 8, longest: 8,
                                                                        lastActiveDay: "2026-11-24", updatedAt: h.time.now.addingTimeInterval(60)), about: other)
            #expect(try await eventually { try await h.count("SELECT count(*)::int FROM content.roast_streaks WHERE current = 8") == 1 })
            #expect(try await h.count("SELECT count(*)::int FROM content.roast_streaks \(mine)") == 0)
            #expect(try await h.count("SELECT count(*)::int FROM content.roast_rewards \(mine)") == 0)
            #expect(try await h.count("SELECT count(*)::int FROM content.roast_rewards") == 1)
        }
    }
}

/// A generator that never answers: the local grammar alone.
struct NoGenerator: TextGenerator {
    func generate(_ request: LLMRequest) async throws -> GeneratedText { throw ProviderFailure(.unavailable, "no model") }
}

enum ContentHarnessGrammars {
    static func roasts() throws -> [String: Grammar] { try RoastMeLaterContent.module.grammars() }
}
