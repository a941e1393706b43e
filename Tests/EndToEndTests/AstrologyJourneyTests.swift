import Foundation
import Testing

@Suite("AstroSvitla end to end through the gateway", .serialized)
struct AstrologyJourneyTests {
    @Test("a signed-in app gets a natal chart through the gateway; bad input is a 422 naming the field")
    func natalChart() async throws {
        try await Stack.run { stack in
            let signIn = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"astrosvitla"}"#)
            #expect(signIn.status == 201, "\(signIn.text)")
            let token = try signIn.json(TokenReply.self).accessToken
            let chart = try await stack.call(.POST, "/v1/astrology/charts/natal", token: token,
                                             json: #"{"date":"1990-04-15","time":"14:30","place":{"latitude":50.4501,"longitude":30.5234,"timeZone":"Europe/Kyiv"}}"#)
            #expect(chart.status == 200, "\(chart.text)")
            let json = try #require(try JSONSerialization.jsonObject(with: chart.body) as? [String: Any])
            #expect((json["planets"] as? [[String: Any]])?.count == 10)
            #expect((json["planets"] as? [[String: Any]])?.first?["sign"] as? String == "aries")
            #expect((json["birth"] as? [String: Any])?["utcOffset"] as? String == "+04:00")

            let bad = try await stack.call(.POST, "/v1/astrology/charts/natal", token: token,
                                           json: #"{"date":"1990-04-15","time":"25:61","place":{"latitude":50.45,"longitude":30.52,"timeZone":"Europe/Kyiv"}}"#)
            #expect(bad.status == 422 && bad.problemCode == "validation_failed" && bad.text.contains(#""field":"time""#))
            let anonymous = try await stack.call(.POST, "/v1/astrology/charts/natal", json: "{}")
            #expect(anonymous.status == 401)
        }
    }
}
