import Foundation
import LanternTestSupport
import Testing

extension EndToEnd.Shared {
@Suite("Lucky Day end to end through the gateway", .serialized)
struct LuckyDayJourneyTests {
    struct Profile: Decodable {
        struct Zodiac: Decodable { var animal: String; var sign: String }
        struct Pillar: Decodable { var role: String; var stem: String; var branch: String; var poem: String; var assumed: Bool }
        var zodiac: Zodiac
        var nickname: String
        var pillars: [Pillar]
        var essence: [String]
        var artisanal: Bool
        var limitations: [String]
    }
    struct Cookie: Decodable, Equatable {
        struct Fortune: Decodable, Equatable { var id: String; var text: String; var artisanal: Bool }
        var state: String
        var fortune: Fortune?
        var opensAgainAt: String?
    }

    @Test("device sign-in → profile from a gazetteer place (pillars by the real astrology, texts by a model) → cookie → break twice → refused → widget")
    func journey() async throws {
        try await Stack.shared { stack in
            // The shared stack's fake models: profiles on gemini-2.5-flash, fortunes on gemini-2.5-flash-lite.
            let llm = try #require(stack.llm)
            llm.reset()
            llm.script("gemini-2.5-flash",
                       .ok(#"{"nickname":"Quiet Metal Horse","poems":{"year":"Your Destiny rides out on a Metal Horse.","month":"Your Environment glows like a forge at dusk.","day":"Your Essence is a bell that rings long after it is struck.","hour":"Your Inner Heart keeps a quiet spring."},"essence":["The Horse in you runs toward open country.","A bright blade rests at your core.","Let what is missing grow slowly."]}"#))
            llm.script("gemini-2.5-flash-lite", .ok("The bell you rang years ago still carries; today someone finally hears it. Smile back."))
            llm.forbid("Kyiv", "Київ", "1990", "14:35", "703448", "Europe/Kyiv")
            let signIn = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"luckyday"}"#)
            #expect(signIn.status == 201, "\(signIn.text)")
            let reply = try signIn.json(TokenReply.self)
            let token = reply.accessToken
            llm.forbid(reply.user?.id ?? "")

            let missing = try await stack.call(.POST, "/v1/fortunes/today/break", token: token)
            #expect(missing.status == 409 && missing.problemCode == "profile_required")

            // Kyiv, 17 May 1990, 14:35: year 庚午 (Metal Horse) by the real Ba Zi.
            let saved = try await stack.call(.PUT, "/v1/fortunes/profile", token: token,
                                             json: #"{"birth":{"date":"1990-05-17","time":"14:35","place":{"id":703448}},"timeZone":"Europe/Rome"}"#)
            #expect(saved.status == 200, "\(saved.text)")
            let profile = try saved.json(Profile.self)
            #expect(profile.zodiac.sign == "Metal Horse" && profile.nickname == "Quiet Metal Horse" && !profile.artisanal, "\(saved.text)")
            #expect(profile.pillars.first { $0.role == "year" }.map { $0.stem + $0.branch } == "GengWu")
            #expect(profile.pillars.count == 4 && profile.essence.count == 3)

            let bad = try await stack.call(.PUT, "/v1/fortunes/profile", token: token,
                                           json: #"{"birth":{"date":"1990-02-30","time":"14:35","place":{"id":703448}},"timeZone":"Europe/Rome"}"#)
            #expect(bad.status == 422 && bad.text.contains(#""field":"birth.date""#), "\(bad.text)")

            // Between the lunar new year (27 January) and Li Chun (4 February) 1990: the sign is the lunar year's,
            // Geng-Wu, the Metal Horse; the year pillar counts from Li Chun, Ji-Si (issue #23 item 2).
            let other = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"luckyday"}"#).json(TokenReply.self)
            let window = try await stack.call(.PUT, "/v1/fortunes/profile", token: other.accessToken,
                                              json: #"{"birth":{"date":"1990-01-30","time":"12:00","place":{"latitude":39.9,"longitude":116.4,"timeZone":"Asia/Shanghai"}},"timeZone":"Asia/Shanghai"}"#)
            #expect(window.status == 200, "\(window.text)")
            let windowProfile = try window.json(Profile.self)
            #expect(windowProfile.zodiac.sign == "Metal Horse", "\(window.text)")
            #expect(windowProfile.pillars.first { $0.role == "year" }.map { $0.stem + $0.branch } == "JiSi")

            let closed = try await stack.call(.GET, "/v1/fortunes/today", token: token)
            #expect(try closed.json(Cookie.self).state == "closed")
            let key = UUID().uuidString
            let first = try await stack.call(.POST, "/v1/fortunes/today/break", token: token, headers: [("Idempotency-Key", key)])
            #expect(first.status == 200, "\(first.text)")
            let opened = try first.json(Cookie.self)
            #expect(opened.state == "opened" && (opened.fortune?.text.count ?? 0) <= 200)
            let retry = try await stack.call(.POST, "/v1/fortunes/today/break", token: token, headers: [("Idempotency-Key", key)])
            #expect(try retry.json(Cookie.self) == opened)
            let second = try await stack.call(.POST, "/v1/fortunes/today/break", token: token, headers: [("Idempotency-Key", UUID().uuidString)])
            #expect(second.status == 409 && second.problemCode == "cookie_not_ready" && second.text.contains("opensAgainAt"))

            let widget = try await stack.call(.GET, "/v1/widgets/luckyday", token: token)
            let shown = try widget.json(Cookie.self)
            #expect(widget.status == 200 && shown == opened)
            let etag = try #require(widget.headers.first(name: "ETag"))
            let same = try await stack.call(.GET, "/v1/widgets/luckyday", token: token, headers: [("If-None-Match", etag)])
            #expect(same.status == 304)
            #expect(!llm.received(model: "gemini-2.5-flash").isEmpty && !llm.received(model: "gemini-2.5-flash-lite").isEmpty, "the models were asked")
            #expect(llm.privacyViolations.isEmpty, "\(llm.privacyViolations)")
        }
    }
}
}
