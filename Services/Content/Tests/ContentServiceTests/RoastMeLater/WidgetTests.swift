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

/// `GET /v1/widgets/roastmelater` as the widget reads it (decoded independently of the service's own types).
struct WidgetBody: Decodable {
    struct Roast: Decodable {
        var id: String; var date: String; var preview: String; var text: String?; var category: String; var categoryIcon: String
        var categoryName: String; var spice: Int?; var language: String; var artisanal: Bool; var curated: Bool; var shareText: String?
    }
    struct Streak: Decodable { var current: Int; var longest: Int; var atRisk: Bool }
    struct Action: Decodable { var id: String; var title: String; var url: String }
    var size: String
    var date: String
    var refreshAt: Date
    var configured: Bool
    var roast: Roast
    var streak: Streak?
    var quickActions: [Action]?
}

extension ContentHarness {
    func widget(_ user: UUID, _ size: String = "medium", headers: HTTPFields = [:]) async throws -> TestResponse {
        try await request(.get, "/v1/widgets/roastmelater?size=\(size)", as: user, app: .roastmelater, headers: headers)
    }

    func widgetBody(_ user: UUID, _ size: String = "medium") async throws -> WidgetBody {
        let response = try await widget(user, size)
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return try response.decode(WidgetBody.self)
    }

    func streak(_ user: UUID, current: Int, longest: Int, lastActiveDay: String?, at date: Date, app: AppID = .roastmelater) async throws {
        let payload = GamificationEvents.StreakChanged(userId: user.lowercased, app: app, current: current, longest: longest,
                                                       lastActiveDay: lastActiveDay, updatedAt: date)
        let event = try EventEnvelope(payload, producer: "gamification", subject: payload.userId, occurredAt: date)
        try await EventPublisher(redis: redis).publish(event, to: streams.events("gamification"))
    }
}

@Suite("RoastMeLater widget")
struct WidgetTests {
    static let settings = #"{"categories":["meetings","email"],"maxSpice":2,"language":"vi","timeZone":"Asia/Ho_Chi_Minh"}"#

    @Test("unconfigured: a curated roast, the same all day; configured: the roast of the day made ahead within the categories and spice, in every size; the widget never calls a model; ETag and 304")
    func roastOfTheDay() async throws {
        // 2026-11-23 08:00 UTC (the harness's start) is 15:00 in Ho Chi Minh City.
        try await ContentHarness.run(llm: ["LLM_MODELS": "gemini:gemini-2.5-flash"]) { h in
            let user = UUID()
            h.llm.forbid(user.uuidString.lowercased())
            let curated = try await h.widgetBody(user, "small")
            #expect(!curated.configured && curated.roast.curated && curated.roast.artisanal && curated.date == "2026-11-23")
            #expect(curated.roast.text == nil && curated.roast.spice == nil && curated.roast.preview.count <= 60 && !curated.roast.categoryIcon.isEmpty)
            #expect(try await h.widgetBody(user, "medium").roast.text.map { RoastsOfTheDay.preview($0) } == curated.roast.preview)
            // The same curated roast all day: same id, and 304 for its ETag.
            let curatedAgain = try await h.widget(user, "small")
            #expect(try curatedAgain.decode(WidgetBody.self).roast.id == curated.roast.id)
            #expect(try await h.widget(user, "small", headers: [.ifNoneMatch: #require(curatedAgain.headers[.eTag])]).status == .notModified)
            #expect(h.llm.received.isEmpty, "the widget path called a model")

            let vietnamese = "Lịch của bạn kín họp đến mức công việc thật phải xếp hàng chờ như khách lạ."
            h.llm.script("gemini-2.5-flash", .ok(vietnamese), .ok(vietnamese))
            let saved = try await h.request(.put, "/v1/widgets/roastmelater/settings", as: user, app: .roastmelater, json: Self.settings)
            #expect(saved.status == .ok, "\(String(buffer: saved.body))")
            // The periodic work makes today's roast at once (a model, with no one waiting).
            #expect(try await eventually { try await h.count("SELECT count(*)::int FROM content.roasts_of_the_day WHERE local_date = '2026-11-23'") == 1 })
            let modelCalls = h.llm.received.count
            #expect(modelCalls == 1)
            for size in ["small", "medium", "large"] {
                let widget = try await h.widgetBody(user, size)
                #expect(widget.configured && !widget.roast.curated && !widget.roast.artisanal && widget.date == "2026-11-23")
                #expect(["meetings", "email"].contains(widget.roast.category) && widget.roast.language == "vi")
                #expect(widget.roast.categoryName == (widget.roast.category == "meetings" ? "Họp hành" : "Email"))
                if size == "small" {
                    #expect(widget.roast.text == nil && widget.roast.preview == RoastsOfTheDay.preview(vietnamese))
                } else {
                    #expect(widget.roast.text == vietnamese && (widget.roast.spice ?? 9) <= 2)
                    #expect(widget.roast.shareText?.contains("Được roast bởi RoastMeLater · https://roastmelater.app") == true)
                }
                #expect((widget.streak != nil) == (size == "large") && (widget.quickActions?.count ?? 0) == (size == "large" ? 3 : 0))
            }
            // Midnight in Ho Chi Minh City is 17:00 UTC: the widget's timeline asks again then.
            #expect(try await h.widgetBody(user).refreshAt == Date(timeIntervalSince1970: 1_795_420_800 + 9 * 3600))
            #expect(h.llm.received.count == modelCalls, "the widget path called a model")

            let first = try await h.widget(user)
            let etag = try #require(first.headers[.eTag])
            #expect(first.headers[.cacheControl] == "private, no-cache")
            #expect(try await h.widget(user, headers: [.ifNoneMatch: etag]).status == .notModified)

            // Tomorrow's is made 6 hours before its midnight (11:00 UTC), and shows from midnight on.
            h.time.advance(by: 3 * 3600)
            #expect(try await eventually { try await h.count("SELECT count(*)::int FROM content.roasts_of_the_day WHERE local_date = '2026-11-24'") == 1 })
            #expect(try await h.widgetBody(user).date == "2026-11-23")
            h.time.advance(by: 6 * 3600 + 60)
            let tomorrow = try await h.widgetBody(user)
            #expect(tomorrow.date == "2026-11-24" && tomorrow.roast.date == "2026-11-24" && !tomorrow.roast.curated)
            #expect(try await h.widget(user, headers: [.ifNoneMatch: etag]).status == .ok)
            #expect(h.llm.privacyViolations.isEmpty)
        }
    }

    @Test("the widget's roast opens in the app with its sharing options: GET, card and share by its id, curated or made ahead; roast.shared announced (#44 item 5, REQ-WDG-003)")
    func widgetRoastIsShareable() async throws {
        try await ContentHarness.run { h in
            let user = UUID()
            for configured in [false, true] {
                if configured {
                    #expect(try await h.request(.put, "/v1/widgets/roastmelater/settings", as: user, app: .roastmelater, json: Self.settings).status == .ok)
                    #expect(try await eventually { try await h.count("SELECT count(*)::int FROM content.roasts_of_the_day") == 1 })
                }
                let widget = try await h.widgetBody(user)
                #expect(widget.roast.curated == !configured)
                let id = widget.roast.id
                let roast = try await h.request(.get, "/v1/roasts/\(id)", as: user, app: .roastmelater)
                #expect(roast.status == .ok, "\(configured): \(String(buffer: roast.body))")
                #expect(String(buffer: roast.body).contains(id))
                let card = try await h.request(.get, "/v1/roasts/\(id)/card?format=post", as: user, app: .roastmelater)
                #expect(card.status == .ok && card.headers[.contentType] == "image/png", "\(configured): \(card.status)")
                let shared = try await h.request(.post, "/v1/roasts/\(id)/share", as: user, app: .roastmelater, json: #"{"channel":"zalo"}"#)
                #expect(shared.status == .ok, "\(configured): \(String(buffer: shared.body))")
                #expect(try await eventually { try await h.events("roast.shared").contains { $0.data["roastId"]?.stringValue == id } })
                // Another user cannot reach it.
                #expect(try await h.request(.get, "/v1/roasts/\(id)", as: UUID(), app: .roastmelater).status == .notFound)
            }
        }
    }

    @Test("the large widget shows content's copy of gamification's streak: the latest by its time, broken after a missed day, at risk until today counts")
    func streak() async throws {
        try await ContentHarness.run { h in
            let user = UUID()
            #expect(try await h.widgetBody(user, "large").streak.map { $0.current == 0 && $0.longest == 0 && !$0.atRisk } == true)
            try await h.streak(user, current: 6, longest: 9, lastActiveDay: "2026-11-22", at: h.time.now)
            // Another app's streak and an older update of this one change nothing.
            try await h.streak(user, current: 40, longest: 40, lastActiveDay: "2026-11-23", at: h.time.now, app: .symbi)
            try await h.streak(user, current: 1, longest: 9, lastActiveDay: "2026-11-20", at: h.time.now.addingTimeInterval(-3600))
            #expect(try await eventually { try await h.count("SELECT count(*)::int FROM content.roast_streaks WHERE user_id = '\(user)' AND current = 6") == 1 })
            #expect(try await eventually { try await h.widgetBody(user, "large").streak.map { $0.current == 6 && $0.longest == 9 && $0.atRisk } == true })
            let large = try await h.widgetBody(user, "large")
            #expect(large.quickActions?.map(\.id) == ["roast", "share", "collections"] && large.quickActions?.first?.title == "Roast me again")
            try await h.streak(user, current: 7, longest: 9, lastActiveDay: "2026-11-23", at: h.time.now.addingTimeInterval(60))
            #expect(try await eventually { try await h.widgetBody(user, "large").streak.map { $0.current == 7 && !$0.atRisk } == true })
            // Two days later with nothing counted: broken, before gamification says so.
            h.time.advance(by: 2 * 86400)
            #expect(try await h.widgetBody(user, "large").streak.map { $0.current == 0 && $0.longest == 9 && !$0.atRisk } == true)
        }
    }

    @Test("settings: defaults until saved; mistakes name the field; a premium category needs its reward; changing them remakes today's roast; deletion erases the widget")
    func settings() async throws {
        try await ContentHarness.run { h in
            let user = UUID()
            struct Settings: Decodable { var categories: [String]; var maxSpice: Int; var language: String; var timeZone: String; var configured: Bool }
            let defaults = try await h.request(.get, "/v1/widgets/roastmelater/settings", as: user, app: .roastmelater).decode(Settings.self)
            #expect(!defaults.configured && defaults.categories.count == 8 && defaults.maxSpice == 3 && defaults.timeZone == "UTC")
            for (body, field) in [(#"{"maxSpice":2}"#, "categories"), (#"{"categories":[],"maxSpice":2}"#, "categories"),
                                  (#"{"categories":["tech","gossip"],"maxSpice":2}"#, "categories[1]"), (#"{"categories":["tech"],"maxSpice":6}"#, "maxSpice"),
                                  (#"{"categories":["tech"],"maxSpice":2,"language":"fr"}"#, "language"),
                                  (#"{"categories":["tech"],"maxSpice":2,"timeZone":"Saigon"}"#, "timeZone")] {
                let response = try await h.request(.put, "/v1/widgets/roastmelater/settings", as: user, app: .roastmelater, json: body)
                #expect(try response.status == .unprocessableContent && response.decode(ProblemBody.self).errors?.first?.field == field, "\(body)")
            }
            #expect(try await h.widget(user, "huge").status == .unprocessableContent)
            let premium = try await h.request(.put, "/v1/widgets/roastmelater/settings", as: user, app: .roastmelater,
                                              json: #"{"categories":["premium"],"maxSpice":5}"#)
            #expect(try premium.status == .forbidden && premium.decode(ProblemBody.self).code == "premium_locked")

            _ = try await h.request(.put, "/v1/widgets/roastmelater/settings", as: user, app: .roastmelater, json: #"{"categories":["tech"],"maxSpice":1}"#)
            #expect(try await eventually { try await h.widgetBody(user).roast.curated == false })
            let tech = try await h.widgetBody(user)
            #expect(tech.roast.category == "tech" && tech.roast.spice == 1 && tech.roast.artisanal)
            // The same settings again keep the day's roast; new ones remake it.
            _ = try await h.request(.put, "/v1/widgets/roastmelater/settings", as: user, app: .roastmelater, json: #"{"categories":["tech"],"maxSpice":1}"#)
            #expect(try await h.widgetBody(user).roast.id == tech.roast.id)
            _ = try await h.request(.put, "/v1/widgets/roastmelater/settings", as: user, app: .roastmelater, json: #"{"categories":["boss"],"maxSpice":1}"#)
            #expect(try await eventually { try await h.widgetBody(user).roast.category == "boss" })

            try await h.streak(user, current: 2, longest: 2, lastActiveDay: "2026-11-23", at: h.time.now)
            #expect(try await eventually { try await h.count("SELECT count(*)::int FROM content.roast_streaks") == 1 })
            try await h.identityEvent("user.deleted", subject: user, data: .object(["userId": .string(user.lowercased), "app": .string("roastmelater")]))
            #expect(try await eventually {
                try await h.count("SELECT (SELECT count(*) FROM content.roast_widgets) + (SELECT count(*) FROM content.roasts_of_the_day) + (SELECT count(*) FROM content.roast_streaks)")
                    == 0
            })
        }
    }

    @Test("the day's category and spice: stable for a user and day, within the settings, and varied across days")
    func picks() {
        let settings = WidgetSettings(categories: ["meetings", "email", "boss"], maxSpice: 4, language: .en, timeZone: "UTC")
        let user = UUID()
        var categories: Set<String> = []
        for offset in 0..<30 {
            let day = LocalDay(year: 2026, month: 11, day: 1).adding(days: offset)
            let pick = RoastsOfTheDay.pick(settings, user: user, day: day)
            #expect(pick == RoastsOfTheDay.pick(settings, user: user, day: day))
            #expect(settings.categories.contains(pick.category) && (3...4).contains(pick.spice))
            categories.insert(pick.category)
        }
        #expect(categories.count == 3)
        #expect(RoastsOfTheDay.preview(String(repeating: "word ", count: 30)).count <= 60)
        #expect(RoastsOfTheDay.preview("Short.") == "Short.")
    }
}

@Suite("LocalDay without Calendar")
struct LocalDayTests {
    @Test("the day of an instant and a day's first instant agree with Calendar in zones with DST, far from UTC and across years")
    func agreesWithCalendar() throws {
        let zones = ["UTC", "Asia/Ho_Chi_Minh", "America/Los_Angeles", "America/New_York", "Europe/Kyiv", "Pacific/Kiritimati", "Pacific/Pago_Pago",
                     "Australia/Lord_Howe", "America/Santiago", "Asia/Kathmandu", "America/Havana"]
        var random = SystemRandomNumberGenerator()
        for name in zones {
            let zone = try #require(TimeZone(identifier: name))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            for _ in 0..<400 {
                let instant = Date(timeIntervalSince1970: Double.random(in: 946_684_800...2_208_988_800, using: &random))
                let parts = calendar.dateComponents([.year, .month, .day], from: instant)
                let day = LocalDay(instant, in: zone)
                #expect(day == LocalDay(year: parts.year ?? 0, month: parts.month ?? 0, day: parts.day ?? 0), "\(name) \(instant)")
                #expect(day.start(in: zone) == calendar.startOfDay(for: instant), "\(name) \(day)")
            }
        }
        // America/Havana and America/Santiago change their clocks at midnight: the day starts at 01:00 then.
        let havana = try #require(TimeZone(identifier: "America/Havana"))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = havana
        let skipped = LocalDay(year: 2027, month: 3, day: 14)
        #expect(skipped.start(in: havana) == calendar.startOfDay(for: calendar.date(from: DateComponents(year: 2027, month: 3, day: 14, hour: 12)) ?? Date()))
    }
}
