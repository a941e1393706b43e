import Foundation
import Testing

extension EndToEnd.Shared {
@Suite("AstroSvitla end to end through the gateway", .serialized)
struct AstrologyJourneyTests {
    @Test("a signed-in app gets a natal chart through the gateway; bad input is a 422 naming the field")
    func natalChart() async throws {
        try await Stack.shared { stack in
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

    @Test("the app finds a birth place by a misspelt name, in Ukrainian too, and charts a birth by the place's id")
    func placeToChart() async throws {
        try await Stack.shared { stack in
            let signIn = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"astrosvitla"}"#)
            let token = try signIn.json(TokenReply.self).accessToken
            struct Places: Decodable {
                struct Place: Decodable { var id: Int; var name: String; var timeZone: String }
                var places: [Place]
                var attribution: String
            }
            let search = try await stack.call(.GET, "/v1/astrology/places?q=Kharkiw&limit=3", token: token)
            #expect(search.status == 200, "\(search.text)")
            let found = try search.json(Places.self)
            let kharkiv = try #require(found.places.first)
            #expect(kharkiv.name == "Kharkiv" && kharkiv.timeZone == "Europe/Kyiv" && found.attribution.contains("GeoNames"))
            let ukrainian = try await stack.call(.GET, "/v1/astrology/places?q=%D0%BA%D0%B8%D1%97%D0%B2&lang=uk", token: token)  // київ
            #expect(try ukrainian.json(Places.self).places.first?.name == "Київ")

            let chart = try await stack.call(.POST, "/v1/astrology/charts/natal", token: token,
                                             json: #"{"date":"1990-04-15","time":"14:30","place":{"id":\#(kharkiv.id)}}"#)
            #expect(chart.status == 200, "\(chart.text)")
            let birth = try #require(try JSONSerialization.jsonObject(with: chart.body) as? [String: Any])["birth"] as? [String: Any]
            #expect(birth?["timeZone"] as? String == "Europe/Kyiv" && birth?["utcOffset"] as? String == "+04:00")

            let bad = try await stack.call(.GET, "/v1/astrology/places?q=Kyiv&limit=99", token: token)
            #expect(bad.status == 422 && bad.text.contains(#""field":"limit""#))
        }
    }
}
}
