@testable import AstroSvitlaContent
import Foundation
import LanternAppStore
import LanternContracts
import LanternLLM
import LanternTestSupport
import Testing

extension EndToEnd.Shared {
@Suite("AstroSvitla reports end to end through the gateway", .serialized)
struct AstroSvitlaJourneyTests {
    static let bundle = SharedStack.bundle

    struct Catalogue: Decodable {
        struct Area: Decodable { var area: String; var purchased: Bool; var reportId: String? }
        var areas: [Area]
    }
    struct Report: Decodable {
        struct Sections: Decodable { var keyInfluences: String; var detailedAnalysis: String; var recommendations: [String] }
        var id: String; var chart: String; var status: String; var sections: Sections?
    }
    struct List: Decodable { struct Chart: Decodable { var chart: String; var reports: [Report] }; var charts: [Chart] }

    @Test("device sign-in → chart → catalogue → purchase → report ready (socket) → Ukrainian report → list → PDF → reinstall (same device) → restored")
    func journey() async throws {
        try await Stack.shared { stack in
            // content trusts this test App Store's root instead of Apple's.
            let store = try #require(stack.appStore)
            let device = UUID().uuidString
            let signIn = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(device)","app":"astrosvitla"}"#)
            #expect(signIn.status == 201, "\(signIn.text)")
            let reply = try signIn.json(TokenReply.self)
            let user = try #require(reply.user?.id)

            let birth = #"{"date":"1990-05-17","time":"14:35","place":{"id":703448}}"#
            let chart = try await stack.call(.POST, "/v1/astrology/charts/natal", token: reply.accessToken, json: birth)
            #expect(chart.status == 200, "\(chart.text)")
            // The contract content reads is what the real astrology answers.
            let summary = try chart.json(NatalChartSummary.self)
            #expect(summary.planets.count == 10 && summary.houses.reliable && summary.fingerprint.count == 64)

            let before = try await stack.call(.GET, "/v1/reports/areas?chart=\(summary.fingerprint)", token: reply.accessToken).json(Catalogue.self)
            #expect(before.areas.count == 5 && before.areas.allSatisfy { !$0.purchased })

            let socket = PairlyRealtimeJourneyTests.Socket(gateway: stack.gateway, token: reply.accessToken)
            defer { socket.close() }
            #expect(try await eventually { socket.types.first == "state" })

            let transaction = store.transaction(bundleId: Self.bundle, productId: "\(Self.bundle).report.career", accountToken: UUID(uuidString: user))
            let bought = try await stack.call(.POST, "/v1/reports/purchases", token: reply.accessToken,
                                              json: #"{"transaction":"\#(try store.sign(transaction))","area":"career","birth":\#(birth)}"#)
            #expect(bought.status == 201, "\(bought.text)")
            let report = try bought.json(Report.self)
            #expect(report.status == "ready" && report.chart == summary.fingerprint)
            #expect(try await eventually { socket.data("report_ready").first?["reportId"] as? String == report.id })

            // A second area in Ukrainian (the app's language by Accept-Language), written by the default stack's local composition.
            let health = store.transaction(bundleId: Self.bundle, productId: "\(Self.bundle).report.health", accountToken: UUID(uuidString: user))
            let ukrainian = try await stack.call(.POST, "/v1/reports/purchases", token: reply.accessToken,
                                                 json: #"{"transaction":"\#(try store.sign(health))","area":"health","birth":\#(birth)}"#,
                                                 headers: [("Accept-Language", "uk-UA,uk;q=0.9,en;q=0.5")])
            #expect(ukrainian.status == 201, "\(ukrainian.text)")
            let uk = try ukrainian.json(Report.self)
            let ukText = (uk.sections?.keyInfluences ?? "") + (uk.sections?.detailedAnalysis ?? "")
            let letters = ukText.unicodeScalars.filter { CharacterSet.letters.contains($0) }
            #expect(letters.count > 1000 && letters.filter { (0x0400...0x04FF).contains($0.value) }.count * 100 / letters.count > 95)

            let list = try await stack.call(.GET, "/v1/reports", token: reply.accessToken).json(List.self)
            #expect(list.charts.map(\.chart) == [summary.fingerprint] && Set(list.charts[0].reports.map(\.id)) == [report.id, uk.id])

            let pdf = try await stack.call(.POST, "/v1/reports/\(report.id)/pdf", token: reply.accessToken, json: #"{"birth":\#(birth)}"#)
            #expect(pdf.status == 200 && pdf.headers.first(name: "content-type") == "application/pdf")
            let text = try await PDFTools.text(pdf.body).replacingOccurrences(of: "\n", with: " ")
            #expect(text.contains("Career and Professional Growth") && text.contains("Practical recommendations"))

            // Reinstall: the same device signs in again and finds its report, and the area shows as bought.
            let again = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(device)","app":"astrosvitla"}"#).json(TokenReply.self)
            #expect(again.user?.id == user)
            let restored = try await stack.call(.GET, "/v1/reports", token: again.accessToken).json(List.self)
            #expect(Set(restored.charts.first?.reports.map(\.id) ?? []) == [report.id, uk.id])
            let after = try await stack.call(.GET, "/v1/reports/areas?chart=\(summary.fingerprint)", token: again.accessToken).json(Catalogue.self)
            #expect(after.areas.filter(\.purchased).map(\.area) == ["career", "health"])

            // The App Store's notification arrives through the gateway without a token.
            let notification = SignedNotification(notificationType: "TEST", notificationUUID: UUID().uuidString, data: nil,
                                                  signedDate: Int64(Date().timeIntervalSince1970 * 1000))
            let posted = try await stack.call(.POST, "/v1/appstore/notifications", json: #"{"signedPayload":"\#(try store.sign(notification))"}"#)
            #expect(posted.status == 200, "\(posted.text)")
        }
    }

    @Test("every chart gets specific material in every area: 300 random births 1900–2100 from the real astrology, ≥ 6 rules per area")
    func coverage() async throws {
        try await Stack.shared { stack in
            let token = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"astrosvitla"}"#)
                .json(TokenReply.self).accessToken
            let (_, book, _) = try AstroSvitlaContent.catalogue()
            let matcher = RuleMatcher(book: book)
            var random = SplitMix64(seed: 300)
            var fewest: [LifeArea: Int] = [:]
            var fewestUnknown: [LifeArea: Int] = [:]
            for n in 0..<300 {
                let year = 1900 + Int(random.next() % 201), month = 1 + Int(random.next() % 12), day = 1 + Int(random.next() % 28)
                let hour = Int(random.next() % 24), minute = Int(random.next() % 60)
                // Inhabited latitudes (Placidus everywhere but inside the polar circles, where astrology uses Porphyry).
                let latitude = Double(Int(random.next() % 12_000)) / 100 - 55, longitude = Double(Int(random.next() % 36_000)) / 100 - 180
                let timeKnown = n % 5 != 0
                let time = timeKnown ? String(format: "\"%02d:%02d\"", hour, minute) : "null"
                let body = String(format: #"{"date":"%04d-%02d-%02d","time":%@,"place":{"latitude":%.2f,"longitude":%.2f,"timeZone":"UTC"}}"#,
                                  year, month, day, time, latitude, longitude)
                let reply = try await stack.call(.POST, "/v1/astrology/charts/natal", token: token, json: body)
                #expect(reply.status == 200, "\(body): \(reply.text)")
                guard reply.status == 200 else { continue }
                let chart = try reply.json(NatalChartSummary.self)
                let all = matcher.matches(chart)
                for area in LifeArea.allCases {
                    let count = all.filter { $0.rule.areas[area] != nil }.count
                    if timeKnown {
                        #expect(count >= 6, "\(body): \(area) has \(count) rules")
                        fewest[area] = min(fewest[area] ?? .max, count)
                    } else {
                        #expect(count >= 6, "\(body): \(area) has \(count) rules (time unknown)")
                        fewestUnknown[area] = min(fewestUnknown[area] ?? .max, count)
                    }
                }
            }
            print("rules per area, fewest over the charts — time known: \(fewest.sorted { $0.key < $1.key }); unknown: \(fewestUnknown.sorted { $0.key < $1.key })")
        }
    }
}
}
