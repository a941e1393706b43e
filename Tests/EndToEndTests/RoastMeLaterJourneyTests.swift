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

        @Test("device sign-in → catalogue → roasts in several categories, moods and both languages → reactions and a favourite → filtered history; premium locked")
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

                // Another app's account cannot roast.
                let other = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"luckyday"}"#).json(TokenReply.self)
                let refused = try await stack.call(.POST, "/v1/roasts", token: other.accessToken, json: #"{"category":"tech","spice":1}"#)
                #expect(refused.status == 403 && refused.problemCode == "roasts_not_available")
            }
        }
    }
}
