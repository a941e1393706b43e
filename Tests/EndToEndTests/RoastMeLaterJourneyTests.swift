import Foundation
import LanternTestSupport
import Testing

extension EndToEnd.Shared {
    @Suite("RoastMeLater end to end through the gateway", .serialized)
    struct RoastMeLaterJourneyTests {
        struct Roast: Decodable {
            struct Reaction: Decodable { var name: String; var emoji: String }
            var id: String; var text: String; var category: String; var mood: String?; var language: String
            var artisanal: Bool; var favourite: Bool; var reaction: Reaction?; var shareText: String
        }
        struct Page: Decodable { var roasts: [Roast]; var nextCursor: String? }
        struct Catalogue: Decodable {
            struct Category: Decodable { var id: String; var unlocked: Bool }
            var categories: [Category]
        }

        @Test("device sign-in → catalogue → roasts in several categories, moods and both languages → reactions and a favourite → filtered history; premium locked → widget → share card")
        func journey() async throws {
            try await Stack.shared { stack in
                let signIn = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"roastmelater"}"#)
                #expect(signIn.status == 201, "\(signIn.text)")
                let token = try signIn.json(TokenReply.self).accessToken

                let catalogue = try await stack.call(.GET, "/v1/roasts/catalogue", token: token)
                #expect(catalogue.status == 200 && catalogue.headers.first(name: "ETag") != nil)
                let categories = try catalogue.json(Catalogue.self).categories
                #expect(categories.count == 9 && categories.first { $0.id == "premium" }?.unlocked == false)

                var written: [Roast] = []
                for (category, mood, language) in [("meetings", "stressed", "en"), ("email", "bored", "vi"), ("tech", nil, "en"), ("boss", "annoyed", "vi")] {
                    let moodField = mood.map { #","mood":"\#($0)""# } ?? ""
                    let reply = try await stack.call(.POST, "/v1/roasts", token: token,
                                                     json: #"{"category":"\#(category)","spice":3\#(moodField),"language":"\#(language)","timeZone":"Asia/Ho_Chi_Minh"}"#,
                                                     headers: [("Idempotency-Key", UUID().uuidString)])
                    #expect(reply.status == 201, "\(reply.text)")
                    let roast = try reply.json(Roast.self)
                    // The shared stack's content has no model for roasts: the local grammar writes them.
                    #expect(roast.artisanal && roast.category == category && roast.language == language && !roast.text.isEmpty && roast.text.count <= 220)
                    #expect(roast.shareText.contains("RoastMeLater · https://roastmelater.app"))
                    written.append(roast)
                }
                let locked = try await stack.call(.POST, "/v1/roasts", token: token, json: #"{"category":"premium","spice":5}"#)
                #expect(locked.status == 403 && locked.problemCode == "premium_locked")

                let fire = try await stack.call(.PUT, "/v1/roasts/\(written[1].id)/reaction", token: token, json: #"{"reaction":"🔥"}"#)
                #expect(try fire.json(Roast.self).reaction?.name == "fire")
                let loved = try await stack.call(.PUT, "/v1/roasts/\(written[2].id)/favourite", token: token)
                #expect(try loved.json(Roast.self).favourite)

                let all = try await stack.call(.GET, "/v1/roasts?limit=3", token: token).json(Page.self)
                #expect(all.roasts.map(\.id) == written.reversed().prefix(3).map(\.id) && all.nextCursor != nil)
                let favourites = try await stack.call(.GET, "/v1/roasts?favourite=true", token: token).json(Page.self)
                #expect(favourites.roasts.map(\.id) == [written[2].id])
                let bored = try await stack.call(.GET, "/v1/roasts?mood=bored&reaction=fire", token: token).json(Page.self)
                #expect(bored.roasts.map(\.id) == [written[1].id])

                // The widget: configured, its roast of the day made ahead by content's periodic work (the local
                // grammar here), in one call per size.
                let settings = try await stack.call(.PUT, "/v1/widgets/roastmelater/settings", token: token,
                                                    json: #"{"categories":["tech","email"],"maxSpice":3,"language":"vi","timeZone":"Asia/Ho_Chi_Minh"}"#)
                #expect(settings.status == 200, "\(settings.text)")
                struct Widget: Decodable { struct Roast: Decodable { var text: String?; var category: String; var curated: Bool; var language: String }
                                           struct Streak: Decodable { var current: Int }; var roast: Roast; var streak: Streak? }
                #expect(try await eventually { try await stack.call(.GET, "/v1/widgets/roastmelater?size=large", token: token).json(Widget.self).roast.curated == false })
                let widget = try await stack.call(.GET, "/v1/widgets/roastmelater?size=large", token: token).json(Widget.self)
                #expect(["tech", "email"].contains(widget.roast.category) && widget.roast.language == "vi" && widget.roast.text != nil && widget.streak?.current == 0)

                // A share card through the gateway: a PNG of 1080×1920 (its IHDR), then the share recorded.
                let card = try await stack.call(.GET, "/v1/roasts/\(written[1].id)/card?template=paper&format=story", token: token)
                #expect(card.status == 200 && card.headers.first(name: "Content-Type") == "image/png")
                let header = [UInt8](card.body.prefix(24))
                #expect(header.starts(with: [0x89, 0x50, 0x4E, 0x47]) && header.count == 24)
                if header.count == 24 {
                    let width = header[16..<20].reduce(0) { $0 << 8 | Int($1) }, height = header[20..<24].reduce(0) { $0 << 8 | Int($1) }
                    #expect(width == 1080 && height == 1920)
                }
                let shared = try await stack.call(.POST, "/v1/roasts/\(written[1].id)/share", token: token, json: #"{"channel":"zalo","template":"paper"}"#)
                #expect(shared.status == 200, "\(shared.text)")

                // Another app's account cannot roast.
                let other = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"luckyday"}"#).json(TokenReply.self)
                let refused = try await stack.call(.POST, "/v1/roasts", token: other.accessToken, json: #"{"category":"tech","spice":1}"#)
                #expect(refused.status == 403 && refused.problemCode == "roasts_not_available")
            }
        }
    
        struct Collections: Decodable {
            struct Collection: Decodable { var id: String; var startDate: String?; var endDate: String? }
            struct Banner: Decodable { var collectionId: String }
            var date: String
            var banner: Banner?
            var collections: [Collection]
        }

        @Test("collections: Tết's shows around Tết of 2026, 2027 and 2028 by the real astrology's Vietnamese calendar; an operator's new collection reaches the app at once; app tokens are refused by the operator API")
        func collections() async throws {
            try await Stack.shared { stack in
                let token = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"roastmelater"}"#)
                    .json(TokenReply.self).accessToken
                // Tết (1/1 of the Vietnamese lunar calendar, reckoned at UTC+7): 2026-02-17, 2027-02-06, 2028-01-26.
                for (tet, from, until) in [("2026-02-17", "2026-02-03", "2026-02-24"), ("2027-02-06", "2027-01-23", "2027-02-13"),
                                           ("2028-01-26", "2028-01-12", "2028-02-02")] {
                    let reply = try await stack.call(.GET, "/v1/roasts/collections?date=\(tet)", token: token)
                    #expect(reply.status == 200, "\(reply.text)")
                    let list = try reply.json(Collections.self)
                    let season = list.collections.first { $0.id == "tet-at-work" }
                    #expect(season?.startDate == from && season?.endDate == until && list.banner?.collectionId == "tet-at-work", "\(tet): \(reply.text)")
                }
                let quiet = try await stack.call(.GET, "/v1/roasts/collections?date=2027-01-22", token: token).json(Collections.self)
                #expect(!quiet.collections.contains { $0.id == "tet-at-work" } && quiet.banner == nil)

                let path = "/v1/operator/roastmelater/collections"
                #expect(try await stack.call(.GET, path, token: token).status == 401)
                let definition = ##"{"id":"e2e-launch","names":{"en":"Launch Week","vi":"Tuần ra mắt"},"descriptions":{"en":"Shipping it.","vi":"Ra mắt thôi."},"icon":"paperplane.fill","themeColor":"#2B8A3E","promptModifier":"The theme is a product launch.","scenarios":[{"id":"go-live","names":{"en":"Go live","vi":"Lên sóng"},"category":"deadlines","prompt":"the minutes before a launch goes live"}],"preview":{"en":"It works. Nobody touch anything.","vi":"Chạy rồi. Đừng ai động vào gì nữa."},"schedule":{"kind":"permanent"}}"##
                let created = try await stack.call(.POST, path, token: SharedStack.operatorKey, json: definition)
                #expect(created.status == 201, "\(created.text)")
                let seen = try await stack.call(.GET, "/v1/roasts/collections", token: token).json(Collections.self)
                #expect(seen.collections.contains { $0.id == "e2e-launch" })
                let roast = try await stack.call(.POST, "/v1/roasts", token: token, json: #"{"collection":"e2e-launch","spice":2,"language":"vi"}"#)
                #expect(roast.status == 201 && roast.text.contains(#""scenario":"go-live""#), "\(roast.text)")
                #expect(try await stack.call(.POST, path + "/e2e-launch/retire", token: SharedStack.operatorKey).status == 200)
            }
        }
    }
}

extension EndToEnd.Shared {
    @Suite("RoastMeLater's streaks and badges end to end through the gateway", .serialized)
    struct GamificationJourneyTests {
        struct CheckIn: Decodable {
            struct Streak: Decodable { var current: Int; var longest: Int; var totalDays: Int }
            struct Badge: Decodable { var id: String }
            var counted: Bool; var localDate: String; var streak: Streak; var badgesEarned: [Badge]
        }
        struct Profile: Decodable {
            struct Streak: Decodable { var current: Int; var totalDays: Int }
            struct Badge: Decodable { var id: String; var earned: Bool; var progress: Double; var name: String }
            var streak: Streak; var badges: [Badge]
        }

        @Test("device sign-in → check-ins on three local days (their event times) → streak 3 and the badge frame on the socket → roasts in 8 categories → Explorer earned → the profile")
        func journey() async throws {
            try await Stack.shared { stack in
                let signIn = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"roastmelater"}"#)
                let token = try signIn.json(TokenReply.self).accessToken
                let socket = PairlyRealtimeJourneyTests.Socket(gateway: stack.gateway, token: token)
                defer { socket.close() }
                #expect(try await eventually { socket.types.contains("state") })

                // Three local days in Ho Chi Minh City: two days ago, yesterday, today (the check-ins' event times —
                // the app sends when it was opened; an app that was offline sends them late).
                let zone = try #require(TimeZone(identifier: "Asia/Ho_Chi_Minh"))
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = zone
                let today = calendar.startOfDay(for: Date())
                var answers: [CheckIn] = []
                for daysAgo in [2, 1, 0] {
                    let at = min(Date(), try #require(calendar.date(byAdding: .hour, value: 1 - 24 * daysAgo, to: today)))
                    let reply = try await stack.call(.POST, "/v1/gamification/check-ins", token: token,
                                                     json: #"{"occurredAt":"\#(ISO8601DateFormatter().string(from: at))","timeZone":"Asia/Ho_Chi_Minh"}"#,
                                                     headers: [("Idempotency-Key", UUID().uuidString)])
                    #expect(reply.status == 200, "\(reply.text)")
                    answers.append(try reply.json(CheckIn.self))
                }
                // Each answer is the streak as of now: the first day, two days ago, is no streak today on its own.
                #expect(answers.map(\.streak.longest) == [1, 2, 3] && answers.map(\.streak.current) == [0, 2, 3])
                #expect(answers.last?.badgesEarned.map(\.id) == ["getting_started"])
                #expect(try await eventually { socket.data("badge_earned").contains { $0["badge"] as? String == "getting_started" } })

                for category in ["meetings", "deadlines", "email", "coworkers", "boss", "remote", "tech", "office"] {
                    let reply = try await stack.call(.POST, "/v1/roasts", token: token,
                                                     json: #"{"category":"\#(category)","spice":2,"language":"en","timeZone":"Asia/Ho_Chi_Minh"}"#,
                                                     headers: [("Idempotency-Key", UUID().uuidString)])
                    #expect(reply.status == 201, "\(reply.text)")
                }
                #expect(try await eventually { socket.data("badge_earned").contains { $0["badge"] as? String == "explorer" } })

                let profile = try await stack.call(.GET, "/v1/gamification/profile?language=vi", token: token)
                #expect(profile.status == 200, "\(profile.text)")
                let body = try profile.json(Profile.self)
                #expect(body.streak.current == 3 && body.streak.totalDays == 3)
                let explorer = body.badges.first { $0.id == "explorer" }
                #expect(explorer?.earned == true && explorer?.name == "Nhà thám hiểm")
                #expect(body.badges.first { $0.id == "roast_rookie" }?.progress == 0.8)

                // Another app's account has no streaks.
                let other = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"luckyday"}"#).json(TokenReply.self)
                let refused = try await stack.call(.GET, "/v1/gamification/profile", token: other.accessToken)
                #expect(refused.status == 403 && refused.problemCode == "gamification_not_available")
            }
        }
    }
}
