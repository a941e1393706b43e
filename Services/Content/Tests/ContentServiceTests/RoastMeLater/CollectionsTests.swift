import ContentKit
import ContentKit
import Foundation
import HTTPTypes
import HummingbirdTesting
import LanternContracts
import LanternCore
import LanternEvents
import LanternTestSupport
@testable import RoastMeLaterContent
import Testing

/// `GET /v1/roasts/collections` as the app reads it (decoded independently of the service's own types).
struct CollectionListBody: Decodable {
    struct Names: Decodable, Equatable { var en: String; var vi: String }
    struct Scenario: Decodable { var id: String; var names: Names; var category: String; var roasted: Bool }
    struct Collection: Decodable {
        var id: String
        var kind: String
        var names: Names
        var themeColor: String
        var scenarios: [Scenario]
        var roastCount: Int
        var roasted: Int
        var completed: Bool
        var startDate: String?
        var endDate: String?
        var version: Int
    }
    struct Banner: Decodable { var collectionId: String; var text: Names; var endDate: String }
    var date: String
    var banner: Banner?
    var collections: [Collection]

    var ids: [String] { collections.map(\.id) }
}

extension ContentHarness {
    func collections(_ user: UUID, _ query: String = "", headers: HTTPFields = [:]) async throws -> TestResponse {
        try await request(.get, "/v1/roasts/collections" + query, as: user, app: .roastmelater, headers: headers)
    }

    func collectionList(_ user: UUID, _ query: String = "") async throws -> CollectionListBody {
        let response = try await collections(user, query)
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return try response.decode(CollectionListBody.self)
    }
}

@Suite("RoastMeLater collections")
struct CollectionsTests {
    static let alice = ContentHarness.operatorKeys["ops-alice"] ?? ""
    static let bob = ContentHarness.operatorKeys["ops-bob"] ?? ""
    static let permanent = ["classic-office", "meeting-madness", "tech-life"]

    @Test("permanent collections always, one rotating collection a month, Tết's around Tết of each year with its banner; the window's ends are exact")
    func schedules() async throws {
        try await ContentHarness.run { h in
            let user = UUID()
            // Today (2026-11-23, a Monday): the permanent three and November's rotating one.
            let today = try await h.collectionList(user, "?timeZone=Asia/Ho_Chi_Minh")
            #expect(today.date == "2026-11-23" && today.ids == Self.permanent + ["deadline-season"] && today.banner == nil)
            let november = try #require(today.collections.last)
            #expect(november.kind == "monthly" && november.startDate == "2026-11-01" && november.endDate == "2026-11-30")
            #expect(today.collections.first?.startDate == nil && today.collections.first?.roastCount == 4)
            // Each month another rotating collection.
            var rotating: [String] = []
            for month in 1...12 {
                let list = try await h.collectionList(user, String(format: "?date=2027-%02d-10", month))
                let extra = list.ids.filter { !Self.permanent.contains($0) && $0 != "tet-at-work" && $0 != "mid-autumn" }
                #expect(extra.count == 1, "\(month): \(list.ids)")
                rotating += extra
            }
            #expect(zip(rotating, rotating.dropFirst()).allSatisfy { $0 != $1 }, "\(rotating)")
            // Tết 2026-02-17, 2027-02-06, 2028-01-26: from 14 days before to 7 days after, with the banner.
            for (tet, first, last, before, after) in [("2026-02-17", "2026-02-03", "2026-02-24", "2026-02-02", "2026-02-25"),
                                                      ("2027-02-06", "2027-01-23", "2027-02-13", "2027-01-22", "2027-02-14"),
                                                      ("2028-01-26", "2028-01-12", "2028-02-02", "2028-01-11", "2028-02-03")] {
                for day in [first, tet, last] {
                    let list = try await h.collectionList(user, "?date=\(day)")
                    let season = try #require(list.collections.first { $0.id == "tet-at-work" }, "\(day): \(list.ids)")
                    #expect(season.kind == "seasonal" && season.startDate == first && season.endDate == last)
                    #expect(list.banner?.collectionId == "tet-at-work" && list.banner?.endDate == last && list.banner?.text.vi.contains("Tết") == true)
                }
                for day in [before, after] {
                    let list = try await h.collectionList(user, "?date=\(day)")
                    #expect(!list.ids.contains("tet-at-work") && list.banner == nil, "\(day): \(list.ids)")
                }
            }
            // Mid-Autumn 2027-09-15: a week before to three days after.
            #expect(try await h.collectionList(user, "?date=2027-09-08").ids.contains("mid-autumn"))
            #expect(try await !h.collectionList(user, "?date=2027-09-19").ids.contains("mid-autumn"))
            // Each year's festivals were asked for once: the dates are kept in memory, never in a table.
            let years = h.astrology.festivalYears.withLock { $0 }
            #expect(years.count == Set(years).count && Set(years) == Set(2025...2029), "\(years.sorted())")
            // Bad queries name the field.
            for (query, field) in [("?date=2027-02-30", "date"), ("?date=2027-2-3", "date"), ("?timeZone=Mars/Olympus", "timeZone")] {
                let response = try await h.collections(user, query)
                #expect(try response.status == .unprocessableContent && response.decode(ProblemBody.self).errors?.first?.field == field, "\(query)")
            }
        }
    }

    @Test("with astrology down the seasonal collections hide and the rest show; once it answers they show again")
    func astrologyDown() async throws {
        try await ContentHarness.run { h in
            let user = UUID()
            h.astrology.festivalsDown.store(true, ordering: .relaxed)
            let down = try await h.collectionList(user, "?date=2027-02-06")
            #expect(down.ids == Self.permanent + ["deadline-season"] && down.banner == nil)
            h.astrology.festivalsDown.store(false, ordering: .relaxed)
            let up = try await h.collectionList(user, "?date=2027-02-06")
            #expect(up.ids.contains("tet-at-work") && up.banner?.collectionId == "tet-at-work")
        }
    }

    @Test("a roast in a collection roasts a scenario: its situation and the theme reach the prompt, the event carries collection, scenario and size; all scenarios roasted completes it")
    func roastingInACollection() async throws {
        try await ContentHarness.run(llm: ["LLM_MODELS": "gemini:gemini-2.5-flash"]) { h in
            let user = UUID()
            h.llm.forbid(user.uuidString.lowercased())
            let seeds = try RoastMeLaterContent.seedCollections()
            let madness = try #require(seeds.first { $0.id == "meeting-madness" })
            let chosen = try await h.roasted(user, #"{"collection":"meeting-madness","scenario":"youre-on-mute","spice":2}"#)
            #expect(chosen.category == "meetings")
            let prompt = try #require(h.llm.received.last?.prompt)
            #expect(prompt.contains("The situation to roast: \(try #require(madness.scenario("youre-on-mute")).prompt)"), "\(prompt)")
            #expect(prompt.contains("The collection's theme: \(madness.promptModifier)"))
            // Without a scenario: the first not roasted yet, until every one is.
            struct InCollection: Decodable { var collection: String?; var scenario: String?; var language: String }
            for scenario in madness.scenarios where scenario.id != "youre-on-mute" {
                let roast = try await h.roast(user, #"{"collection":"meeting-madness","spice":3,"language":"vi"}"#).decode(InCollection.self)
                #expect(roast.scenario == scenario.id && roast.collection == "meeting-madness" && roast.language == "vi")
            }
            // Announced with the collection's size, so gamification can tell the completion (REQ-COL-008).
            #expect(try await eventually { try await h.events("roast.generated").count == madness.scenarios.count })
            let announced = try await h.events("roast.generated").map { try $0.payload(as: ContentEvents.RoastGenerated.self) }
            #expect(Set(announced.compactMap(\.scenario)) == Set(madness.scenarios.map(\.id)))
            #expect(announced.allSatisfy { $0.collection == "meeting-madness" && $0.collectionSize == madness.scenarios.count })
            let list = try await h.collectionList(user)
            let done = try #require(list.collections.first { $0.id == "meeting-madness" })
            #expect(done.completed && done.roasted == madness.scenarios.count && done.scenarios.allSatisfy { $0.roasted })
            #expect(list.collections.filter { $0.id != "meeting-madness" }.allSatisfy { !$0.completed && $0.roasted == 0 })
            // A retry of a roast whose scenario was chosen for the user is that roast again, not a reused key.
            let first = try await h.roast(user, #"{"collection":"tech-life","spice":1}"#, key: "tech-1")
            let retry = try await h.roast(user, #"{"collection":"tech-life","spice":1}"#, key: "tech-1")
            #expect(first.status == .created && retry.status == .ok)
            #expect(try first.decode(RoastBody.self).id == retry.decode(RoastBody.self).id)
            #expect(try await h.roast(user, #"{"collection":"tech-life","scenario":"password-reset","spice":1}"#, key: "tech-1").status == .unprocessableContent)
            // The history filters by collection; the roast says which it was in.
            struct Page: Decodable { struct Item: Decodable { var collection: String?; var scenario: String? }; var roasts: [Item] }
            let page = try await h.request(.get, "/v1/roasts?collection=meeting-madness&limit=100", as: user, app: .roastmelater).decode(Page.self)
            #expect(page.roasts.count == madness.scenarios.count && Set(page.roasts.compactMap(\.scenario)) == Set(madness.scenarios.map(\.id)))
            // Mistakes name the field: a category besides a collection, an unknown collection or scenario, a season
            // that is not on, a scenario without its collection.
            for (body, field, code) in [(#"{"collection":"tech-life","category":"tech","spice":1}"#, "category", "validation_failed"),
                                        (#"{"collection":"no-such","spice":1}"#, "collection", "validation_failed"),
                                        (#"{"collection":"tech-life","scenario":"no-such","spice":1}"#, "scenario", "validation_failed"),
                                        (#"{"collection":"tet-at-work","spice":1}"#, "collection", "collection_not_running"),
                                        (#"{"scenario":"printer","category":"office","spice":1}"#, "scenario", "validation_failed")] {
                let response = try await h.roast(user, body)
                let problem = try response.decode(ProblemBody.self)
                #expect(response.status == .unprocessableContent && problem.errors?.first?.field == field && problem.code == code, "\(body): \(String(buffer: response.body))")
            }
            #expect(h.llm.privacyViolations.isEmpty)
        }
    }

    static let newCollection = """
        {"id":"quarterly-review","names":{"en":"Quarterly Review","vi":"Đánh giá quý"},
         "descriptions":{"en":"Goals, metrics and the slide nobody reads.","vi":"Mục tiêu, chỉ số và trang slide không ai đọc."},
         "icon":"chart.bar.fill","themeColor":"#1C7ED6","promptModifier":"The theme is the quarterly review.",
         "scenarios":[{"id":"okr","names":{"en":"The OKRs","vi":"OKR"},"category":"boss","prompt":"objectives and key results nobody remembers setting"}],
         "preview":{"en":"Your key result: survive the review.","vi":"Kết quả then chốt của bạn: sống sót qua buổi đánh giá."},
         "schedule":{"kind":"permanent"}}
        """

    @Test("the operator API: its own keys (none, an app token or a wrong key is 401 with a challenge), validation naming fields, versions with If-Match, and an audit trail of who changed what")
    func operators() async throws {
        try await ContentHarness.run { h in
            let path = "/v1/operator/roastmelater/collections"
            let appToken = try await h.identity.token(user: UUID(), app: .roastmelater)
            for key in [nil, appToken, "alice-0123456789abcdef0123456789abcdeX"] {
                let refused = try await h.operatorRequest(.get, path, key: key)
                #expect(refused.status == .unauthorized && refused.headers[.wwwAuthenticate] == #"Bearer realm="roastmelater-operators""#)
            }
            // An app token is refused by the operator API, and an operator key by the app's routes.
            #expect(try await h.operatorRequest(.post, path, key: appToken, json: Self.newCollection).status == .unauthorized)
            #expect(try await h.operatorRequest(.get, "/v1/roasts/collections", key: Self.alice).status == .unauthorized)

            // A definition with mistakes: each named.
            let broken = Self.newCollection.replacingOccurrences(of: "#1C7ED6", with: "blue")
                .replacingOccurrences(of: #""category":"boss""#, with: #""category":"gossip""#)
                .replacingOccurrences(of: #"{"kind":"permanent"}"#, with: #"{"kind":"seasonal","festival":"halloween","daysBefore":3,"daysAfter":99}"#)
            let invalid = try await h.operatorRequest(.post, path, key: Self.alice, json: broken)
            #expect(invalid.status == .unprocessableContent)
            let fields = Set(try invalid.decode(ProblemBody.self).errors?.map(\.field) ?? [])
            #expect(fields == ["themeColor", "scenarios[0].category", "schedule.festival", "schedule.daysAfter"], "\(fields)")

            // What the app sees before.
            let user = UUID()
            let before = try await h.collections(user)
            let etag = try #require(before.headers[.eTag])
            #expect(before.headers[.cacheControl] == "private, max-age=60")
            #expect(try await h.collections(user, headers: [.ifNoneMatch: etag]).status == .notModified)

            let created = try await h.operatorRequest(.post, path, key: Self.alice, json: Self.newCollection)
            #expect(created.status == .created && created.headers[.eTag] == #""1""#, "\(String(buffer: created.body))")
            #expect(try await h.operatorRequest(.post, path, key: Self.alice, json: Self.newCollection).status == .conflict)
            // The app's next revalidation gets the change (no cache in between: the one-minute bound is the app's max-age).
            let after = try await h.collections(user, headers: [.ifNoneMatch: etag])
            #expect(try after.status == .ok && after.decode(CollectionListBody.self).ids.contains("quarterly-review"))
            _ = try await h.roasted(user, #"{"collection":"quarterly-review","spice":2}"#)

            // Bob edits version 1; Alice's edit made on version 1 too is refused, then made on version 2.
            let renamed = Self.newCollection.replacingOccurrences(of: "Quarterly Review", with: "Quarterly Reviews")
            let edited = try await h.operatorRequest(.put, path + "/quarterly-review", key: Self.bob, json: renamed, headers: [.ifMatch: #""1""#])
            #expect(edited.status == .ok && edited.headers[.eTag] == #""2""#)
            let stale = try await h.operatorRequest(.put, path + "/quarterly-review", key: Self.alice, json: Self.newCollection, headers: [.ifMatch: #""1""#])
            #expect(try stale.status == .preconditionFailed && stale.decode(ProblemBody.self).code == "collection_changed")
            let otherID = try await h.operatorRequest(.put, path + "/quarterly-review", key: Self.alice, json: renamed.replacingOccurrences(of: #""id":"quarterly-review""#, with: #""id":"renamed""#))
            #expect(otherID.status == .unprocessableContent)
            // The same definition again changes nothing and records nothing.
            #expect(try await h.operatorRequest(.put, path + "/quarterly-review", key: Self.alice, json: renamed).headers[.eTag] == #""2""#)

            // Retired: gone from the app, refused for roasts, kept in the operators' list; restored: back.
            let retired = try await h.operatorRequest(.post, path + "/quarterly-review/retire", key: Self.alice, headers: [.ifMatch: #""2""#])
            #expect(retired.status == .ok && retired.headers[.eTag] == #""3""#)
            #expect(try await !h.collectionList(user).ids.contains("quarterly-review"))
            #expect(try await h.roast(user, #"{"collection":"quarterly-review","spice":2}"#).status == .unprocessableContent)
            struct OperatorList: Decodable { struct Item: Decodable { struct C: Decodable { var id: String }; var collection: C; var retired: Bool; var updatedBy: String }; var collections: [Item] }
            let all = try await h.operatorRequest(.get, path, key: Self.bob).decode(OperatorList.self)
            #expect(all.collections.count == 9 && all.collections.first { $0.collection.id == "quarterly-review" }.map { $0.retired && $0.updatedBy == "ops-alice" } == true)
            #expect(try await h.operatorRequest(.post, path + "/quarterly-review/restore", key: Self.bob).status == .ok)
            #expect(try await h.collectionList(user).ids.contains("quarterly-review"))

            // The audit trail: who, when, what.
            struct Changes: Decodable {
                struct Change: Decodable { var action: String; var version: Int; var by: String; var fields: [String: JSONValue] }
                var changes: [Change]
            }
            let trail = try await h.operatorRequest(.get, path + "/quarterly-review/changes", key: Self.alice).decode(Changes.self).changes
            #expect(trail.map(\.action) == ["restored", "retired", "edited", "created"] && trail.map(\.by) == ["ops-bob", "ops-alice", "ops-bob", "ops-alice"])
            #expect(trail.map(\.version) == [4, 3, 2, 1])
            #expect(Set(trail[2].fields.keys) == ["names"], "\(trail[2].fields)")
            #expect(trail[2].fields["names"] == .object(["before": .object(["en": .string("Quarterly Review"), "vi": .string("Đánh giá quý")]),
                                                        "after": .object(["en": .string("Quarterly Reviews"), "vi": .string("Đánh giá quý")])]))
            #expect(try await h.operatorRequest(.get, path + "/nothing/changes", key: Self.alice).status == .notFound)
            // The catalogue's seeds are recorded as created by `catalogue`.
            let seeded = try await h.operatorRequest(.get, path + "/tet-at-work/changes", key: Self.alice).decode(Changes.self).changes
            #expect(seeded.map(\.by) == ["catalogue"])
        }
    }

    @Test("every seed collection is valid (catalogue categories, festival keys tet and trung_thu, both languages); one rotating collection per month")
    func seeds() throws {
        let catalogue = try RoastMeLaterContent.catalogue()
        let seeds = try RoastMeLaterContent.seedCollections()
        #expect(seeds.count == 8 && Set(seeds.map(\.id)).count == 8)
        for seed in seeds {
            #expect(seed.problems(catalogue: catalogue, festivals: ["tet", "trung_thu"]).isEmpty, "\(seed.id): \(seed.problems(catalogue: catalogue, festivals: ["tet", "trung_thu"]))")
        }
        // Each month of the year has exactly one rotating collection.
        let months = seeds.flatMap { seed -> [Int] in if case .monthly(let months) = seed.schedule { months } else { [] } }
        #expect(months.sorted() == Array(1...12))
        #expect(LocalDay("2027-02-29") == nil && LocalDay("2028-02-29") != nil && LocalDay("２０２７-01-01") == nil && LocalDay("2027-1-01") == nil)
    }

    @Test("an operator's texts follow the visible-text rule of every user text: stacked marks, blank fillers and invisible formatting are refused by field (#44 item 5)")
    func visibleTexts() throws {
        let catalogue = try RoastMeLaterContent.catalogue()
        let seed = try #require(try RoastMeLaterContent.seedCollections().first)
        var edited = seed
        edited.names.en = "A" + String(repeating: "\u{301}", count: 10_000)
        edited.names.vi = String(repeating: "\u{3164}", count: 5)
        edited.descriptions.en = String(repeating: "\u{2800}", count: 12)
        edited.preview.vi = "Sếp \u{202E}nói"
        edited.scenarios[0].names.en = "\u{200B}"
        edited.promptModifier = "\u{115F}\u{1160}"
        let fields = Set(edited.problems(catalogue: catalogue, festivals: ["tet", "trung_thu"]).map(\.field))
        #expect(fields == ["names.en", "names.vi", "descriptions.en", "preview.vi", "scenarios[0].names.en", "promptModifier"], "\(fields)")
        // Real text stays valid: Vietnamese in NFD, an emoji sequence, a Persian non-joiner.
        var real = seed
        real.names.vi = "Te\u{302}\u{301}t 👩‍💻"
        real.preview.en = "می\u{200C}خواهم"
        #expect(real.problems(catalogue: catalogue, festivals: ["tet", "trung_thu"]).isEmpty)
    }
}
