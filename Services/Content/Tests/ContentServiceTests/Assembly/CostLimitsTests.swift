import Foundation
import HTTPTypes
import HummingbirdTesting
import LanternCore
import LanternTestSupport
import Testing

/// Limits by cost (issue #23 item 4): a model call and a render cost a hundred reads, and device accounts are free.
@Suite("content's cost limits: model calls per account and day, renders per account and minute, the cheap check first")
struct CostLimitsTests {
    static let roastText = "Your meetings have meetings about the meetings they could have skipped."

    @Test("past LLM_CALLS_PER_ACCOUNT_PER_DAY an account's roasts come from the local grammar (artisanal), with no model call; other accounts and the next UTC day call the model again")
    func modelBudget() async throws {
        try await ContentHarness.run(llm: ["LLM_MODELS": "gemini:gemini-2.5-flash"], extra: ["LLM_CALLS_PER_ACCOUNT_PER_DAY": "2"]) { h in
            h.llm.script("gemini-2.5-flash", .ok(Self.roastText))
            let user = UUID(), other = UUID()
            let body = #"{"category":"meetings","spice":2,"language":"en"}"#
            let first = try await h.roasted(user, body), second = try await h.roasted(user, body)
            #expect(!first.artisanal && !second.artisanal && first.text == Self.roastText)
            #expect(h.llm.received(model: "gemini-2.5-flash").count == 2)
            let third = try await h.roasted(user, body)
            #expect(third.artisanal && third.text != Self.roastText, "the day's model calls are spent: the local grammar wrote it")
            #expect(h.llm.received(model: "gemini-2.5-flash").count == 2, "no model call past the budget")
            #expect(try await !h.roasted(other, body).artisanal, "another account has its own budget")
            #expect(h.llm.received(model: "gemini-2.5-flash").count == 3)
            // The count lives in Redis under the deployment's prefix, by account and UTC day.
            let day = Int(h.time.now.timeIntervalSince1970) / 86_400
            let key = "\(h.streams.prefix):ratelimit:llm-calls:\(user.uuidString.lowercased()):\(day)"
            #expect(try await h.redis.send(["GET", key]).string == "3", "two calls, then one refused")
            h.time.advance(by: 86_400)
            #expect(try await !h.roasted(user, body).artisanal, "a new UTC day, a new budget")
        }
    }

    @Test("saving the same Lucky Day profile again makes no model call and keeps the profile; another time zone writes it anew")
    func sameProfileAgain() async throws {
        try await ContentHarness.run(llm: ["LLM_MODELS": "gemini:gemini-2.5-flash"]) { h in
            let user = UUID()
            // The profile's texts, not the fortunes made ahead in the background.
            func profileCalls() -> Int { h.llm.received(model: "gemini-2.5-flash").filter { $0.prompt.contains("mystical nickname") }.count }
            let first = try await h.createProfile(user)
            #expect(profileCalls() == 1)
            let again = try await h.createProfile(user)
            #expect(again.nickname == first.nickname && again.essence == first.essence)
            #expect(profileCalls() == 1, "the same birth data again: no model call")
            _ = try await h.createProfile(user, body: ContentHarness.kyivBirth.replacingOccurrences(of: "Europe/Rome", with: "Asia/Tokyo"))
            #expect(profileCalls() == 2, "another zone is another profile")
        }
    }

    @Test("share cards past RENDERS_PER_ACCOUNT_PER_MINUTE are 429 render_limited with Retry-After; a card already drawn is no render; other accounts draw")
    func cardRenders() async throws {
        try await ContentHarness.run(extra: ["RENDERS_PER_ACCOUNT_PER_MINUTE": "2"]) { h in
            let user = UUID(), other = UUID()
            let roast = try await h.roasted(user, #"{"category":"email","spice":3,"language":"en"}"#)
            func card(_ query: String, as who: UUID = user) async throws -> TestResponse {
                try await h.request(.get, "/v1/roasts/\(roast.id)/card?\(query)", as: who, app: .roastmelater)
            }
            #expect(try await card("format=story").status == .ok)
            #expect(try await card("format=story").status == .ok, "drawn already: served from the cache, not counted")
            #expect(try await card("format=post").status == .ok)
            let limited = try await card("format=post&template=paper")
            #expect(limited.status == .tooManyRequests)
            #expect(try limited.decode(ProblemBody.self).code == "render_limited")
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            #expect(try await card("format=story").status == .ok, "a card already drawn is served even past the limit")
            let theirs = try await h.roasted(other, #"{"category":"email","spice":3,"language":"en"}"#)
            #expect(try await h.request(.get, "/v1/roasts/\(theirs.id)/card", as: other, app: .roastmelater).status == .ok)
        }
    }
}
