import Foundation
import LanternClient
import LanternTestSupport
import OpenAPIURLSession
import Synchronization
import Testing

extension EndToEnd.Shared {
    /// The generated Swift client (Clients/LanternClient, `make client`) over URLSession, as an iOS app uses it,
    /// against the running stack: if the document and the services drift apart, this journey stops compiling or
    /// stops decoding.
    @Suite("AstroSvitla through the generated Swift client", .serialized)
    struct ClientJourneyTests {
        final class Token: Sendable {
            let value = Mutex<String?>(nil)
        }

        @Test("device sign-in → misspelt place search → natal chart, and a bad date as a typed 422 problem naming the field")
        func journey() async throws {
            try await Stack.shared { stack in
                let token = Token()
                let client = Client.lantern(serverURL: try #require(URL(string: stack.gateway)), transport: URLSessionTransport()) {
                    token.value.withLock { $0 }
                }

                let signedIn = try await client.signInWithDevice(body: .json(.init(deviceId: UUID().uuidString.lowercased(), app: .astrosvitla)))
                let tokens = try signedIn.created.body.json.value1
                #expect(tokens.tokenType == .bearer && !tokens.accessToken.isEmpty)
                token.value.withLock { $0 = tokens.accessToken }

                let found = try await client.searchPlaces(query: .init(q: "Kharkiw", limit: 3)).ok.body.json
                let kharkiv = try #require(found.places.first)
                #expect(kharkiv.name == "Kharkiv" && kharkiv.timeZone == "Europe/Kyiv")

                let request = Components.Schemas.NatalChartRequest(date: "1990-04-15", time: "14:30",
                                                                   place: .init(value1: .init(id: kharkiv.id)))
                let chart = try await client.computeNatalChart(body: .json(request)).ok.body.json
                #expect(chart.birth.timeZone == "Europe/Kyiv" && chart.birth.utcOffset == "+04:00")
                #expect(chart.planets.count == 10)

                var bad = request
                bad.date = "1990-02-30"
                let refused = try await client.computeNatalChart(body: .json(bad))
                let problem = try refused.unprocessableContent.body.applicationProblemJson
                #expect(problem.status == 422 && problem.codeText == "validation_failed")
                #expect(problem.errors?.contains { $0.field == "date" } == true, "\(problem)")
            }
        }
    }
}
