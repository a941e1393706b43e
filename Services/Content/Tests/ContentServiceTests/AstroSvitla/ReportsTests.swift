import Foundation
import HTTPTypes
import HummingbirdTesting
import LanternEvents
import LanternAppStore
import LanternContracts
import LanternCore
import LanternTestSupport
import NIOCore
import NIOFoundationCompat
import Testing

private let bundle = "app.lantern.astrosvitla"
private let birth = #"{"date":"1990-05-17","time":"14:35","place":{"id":703448}}"#

/// The report as the API answers it.
struct ReportBody: Decodable {
    struct Sections: Decodable { var keyInfluences: String; var detailedAnalysis: String; var recommendations: [String] }
    struct Failure: Decodable { var reason: String; var supportCode: String }
    struct Price: Decodable { var amount: String; var currency: String }
    var id: String
    var chart: String
    var area: String
    var title: String
    var language: String
    var status: String
    var purchasedAt: Date?
    var price: Price?
    var birthTimeKnown: Bool
    var notes: [String]
    var sections: Sections?
    var failure: Failure?
}

struct CatalogueBody: Decodable {
    struct Area: Decodable {
        var area: String; var icon: String; var title: String; var description: String
        var price: ReportBody.Price; var productId: String; var purchased: Bool; var reportId: String?
    }
    var language: String
    var pricing: String
    var areas: [Area]
}

private func withStore(_ store: TestAppStore, llm: [String: String] = [:], extra: [String: String] = [:],
                       _ body: @Sendable (ContentHarness) async throws -> Void) async throws {
    try await ReportsHarness.run(store, llm: llm, extra: extra, body)
}

extension ContentHarness {
    /// A signed transaction for `area`, made for `user` (its `appAccountToken`) at the harness's time.
    func transaction(_ store: TestAppStore, for user: UUID, area: String = "career", id: String? = nil,
                     environment: AppStoreEnvironment = .sandbox) throws -> String {
        var signed = store.transaction(bundleId: bundle, productId: "\(bundle).report.\(area)", accountToken: user, environment: environment,
                                       signedAt: time.now)
        if let id { signed.transactionId = id; signed.originalTransactionId = id }
        return try store.sign(signed)
    }

    /// Posts an App Store notification of `type` about the transaction `transactionId` (made for `user`, in `area`),
    /// the notification signed at `signedAt` (the harness's time by default).
    func notify(_ store: TestAppStore, _ type: String, transactionId: String, for user: UUID, area: String = "career",
                environment: AppStoreEnvironment = .sandbox, signedAt: Date? = nil) async throws -> TestResponse {
        let signed = signedAt ?? time.now
        var inner = store.transaction(bundleId: bundle, productId: "\(bundle).report.\(area)", accountToken: user, environment: environment,
                                      signedAt: signed, revokedAt: type == "REFUND_REVERSED" ? nil : signed)
        inner.transactionId = transactionId
        inner.originalTransactionId = transactionId
        let notification = SignedNotification(
            notificationType: type, notificationUUID: UUID().uuidString.lowercased(),
            data: .init(appAppleId: 1, bundleId: bundle, environment: environment, signedTransactionInfo: try store.sign(inner)),
            signedDate: Int64(signed.timeIntervalSince1970 * 1000))
        return try await client.execute(uri: "/v1/appstore/notifications", method: .post, headers: [.contentType: "application/json"],
                                        body: ByteBuffer(string: #"{"signedPayload":"\#(try store.sign(notification))"}"#))
    }

    func buy(_ user: UUID, jws: String, area: String = "career", language: String? = nil, birth body: String = birth,
             headers: HTTPFields = [:]) async throws -> TestResponse {
        let languageField = language.map { #","language":"\#($0)""# } ?? ""
        return try await request(.post, "/v1/reports/purchases", as: user, app: .astrosvitla,
                                 json: #"{"transaction":"\#(jws)","area":"\#(area)"\#(languageField),"birth":\#(body)}"#, headers: headers)
    }
}

@Suite("AstroSvitla reports: catalogue, purchases verified on the server, generation, refunds, deletion")
struct ReportsTests {
    @Test("catalogue: five areas with icon, title, description, USD price and product id, in the app's language")
    func catalogue() async throws {
        try await withStore(try TestAppStore()) { h in
            let user = UUID()
            var headers: HTTPFields = [:]
            headers[.acceptLanguage] = "uk-UA,uk;q=0.9"
            let uk = try await h.request(.get, "/v1/reports/areas", as: user, app: .astrosvitla, headers: headers).decode(CatalogueBody.self)
            #expect(uk.language == "uk")
            #expect(uk.areas.map(\.area) == ["general", "finances", "career", "relationships", "health"])
            #expect(uk.areas.map(\.price.amount) == ["9.99", "6.99", "6.99", "5.99", "5.99"] && uk.areas.allSatisfy { $0.price.currency == "USD" })
            #expect(uk.areas[0].title == "Загальний огляд життя" && uk.areas[2].productId == "\(bundle).report.career")
            headers[.acceptLanguage] = "de-DE"
            let other = try await h.request(.get, "/v1/reports/areas", as: user, app: .astrosvitla, headers: headers).decode(CatalogueBody.self)
            #expect(other.language == "en" && other.areas[0].title == "General Life Overview" && !other.pricing.isEmpty)

            let bad = try await h.request(.get, "/v1/reports/areas?chart=nope", as: user, app: .astrosvitla)
            #expect(bad.status == .unprocessableContent)
            let pairly = try await h.request(.get, "/v1/reports/areas", as: user, app: .pairly)
            #expect(pairly.status == .forbidden)
        }
    }

    @Test("a verified purchase gets its report at once: three sections in shape, listed, shareable; the area shows as bought")
    func purchase() async throws {
        let store = try TestAppStore()
        try await withStore(store) { h in
            let user = UUID()
            let response = try await h.buy(user, jws: try h.transaction(store, for: user))
            #expect(response.status == .created, "\(String(buffer: response.body))")
            let report = try response.decode(ReportBody.self)
            #expect(report.status == "ready" && report.area == "career" && report.language == "en" && report.birthTimeKnown)
            #expect(report.price?.amount == "6.99" && report.purchasedAt != nil)
            let sections = try #require(report.sections)
            #expect((2...3).contains(sections.keyInfluences.filter { ".!?".contains($0) }.count))
            let words = sections.detailedAnalysis.split(whereSeparator: \.isWhitespace).count
            #expect((400...500).contains(words))
            #expect((3...4).contains(sections.recommendations.count))

            let fetched = try await h.request(.get, "/v1/reports/\(report.id)", as: user, app: .astrosvitla).decode(ReportBody.self)
            #expect(fetched.sections?.detailedAnalysis == sections.detailedAnalysis)
            let text = try await h.request(.get, "/v1/reports/\(report.id)/text", as: user, app: .astrosvitla)
            #expect(text.headers[.contentType]?.hasPrefix("text/plain") == true)
            #expect(String(buffer: text.body).contains(sections.keyInfluences))

            let catalogue = try await h.request(.get, "/v1/reports/areas?chart=\(report.chart)", as: user, app: .astrosvitla).decode(CatalogueBody.self)
            #expect(catalogue.areas.filter(\.purchased).map(\.area) == ["career"] && catalogue.areas[2].reportId == report.id)

            struct List: Decodable { struct Chart: Decodable { var chart: String; var reports: [ReportBody] }; var charts: [Chart] }
            let list = try await h.request(.get, "/v1/reports", as: user, app: .astrosvitla).decode(List.self)
            #expect(list.charts.count == 1 && list.charts[0].chart == report.chart && list.charts[0].reports.map(\.id) == [report.id])
            // Someone else's report does not exist for them.
            #expect(try await h.request(.get, "/v1/reports/\(report.id)", as: UUID(), app: .astrosvitla).status == .notFound)
        }
    }

    @Test("refused, and nothing recorded: another root, no Apple markers, an expired leaf, a tampered payload, another bundle, another product, another account, a refunded transaction")
    func refusals() async throws {
        let store = try TestAppStore()
        try await withStore(store) { h in
            let user = UUID()
            func code(_ response: TestResponse) throws -> String { try response.decode(ProblemBody.self).code }
            let now = h.time.now
            func signed(_ by: TestAppStore, productArea: String = "career", accountToken: UUID? = nil, bundleId: String = bundle,
                        revoked: Bool = false) throws -> String {
                try by.sign(by.transaction(bundleId: bundleId, productId: "\(bundle).report.\(productArea)", accountToken: accountToken ?? user,
                                           signedAt: now, revokedAt: revoked ? now : nil))
            }
            var noMarker = TestAppStore.Options()
            noMarker.leafMarker = false
            var expired = TestAppStore.Options()
            expired.leafValidity = -86_400 * 400 ... -86_400 * 2
            for jws in [try signed(try TestAppStore()), try signed(try TestAppStore(options: noMarker)),
                        try signed(try TestAppStore(options: expired)), try signed(store, bundleId: "com.example.other")] {
                let response = try await h.buy(user, jws: jws)
                #expect(try response.status == .unprocessableContent && (code(response)) == "transaction_invalid", "\(String(buffer: response.body))")
            }
            // A payload changed after signing.
            let parts = try signed(store).split(separator: ".").map(String.init)
            var payload = try JSONSerialization.jsonObject(with: Data(base64Encoded: parts[1].base64Padded)!) as! [String: Any]
            payload["productId"] = "\(bundle).report.general"
            let tampered = [parts[0], TestAppStore.base64URL(try JSONSerialization.data(withJSONObject: payload)), parts[2]].joined(separator: ".")
            let tamperedResponse = try await h.buy(user, jws: tampered, area: "general")
            #expect(try tamperedResponse.status == .unprocessableContent && (code(tamperedResponse)) == "transaction_invalid")

            let wrongArea = try await h.buy(user, jws: try signed(store, productArea: "health"), area: "career")
            #expect(try wrongArea.status == .unprocessableContent && (code(wrongArea)) == "transaction_product_mismatch")
            let otherAccount = try await h.buy(user, jws: try signed(store, accountToken: UUID()))
            #expect(try otherAccount.status == .forbidden && (code(otherAccount)) == "transaction_other_account")
            let refunded = try await h.buy(user, jws: try signed(store, revoked: true))
            #expect(try refunded.status == .conflict && (code(refunded)) == "transaction_revoked")
            let badBody = try await h.request(.post, "/v1/reports/purchases", as: user, app: .astrosvitla, json: #"{"area":"love"}"#)
            let fields = Set(try badBody.decode(ProblemBody.self).errors?.map(\.field) ?? [])
            #expect(badBody.status == .unprocessableContent && fields == ["transaction", "area", "birth"])
            let badBirth = try await h.buy(user, jws: try signed(store), birth: #"{"date":"1800-01-01","time":"12:00","place":{"id":1}}"#)
            #expect(try badBirth.status == .unprocessableContent && (badBirth.decode(ProblemBody.self)).errors?.first?.field == "birth.date")

            #expect(try await h.count("SELECT count(*)::int FROM content.report_purchases") == 0)
            #expect(try await h.count("SELECT count(*)::int FROM content.reports") == 0)
        }
    }

    @Test("a replayed purchase returns the same report; ten concurrent posts of one transaction make one report; the same area bought again returns it too")
    func idempotent() async throws {
        let store = try TestAppStore()
        try await withStore(store) { h in
            let user = UUID()
            let jws = try h.transaction(store, for: user)
            let ids = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String).self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        let response = try await h.buy(user, jws: jws)
                        return (response.status, try response.decode(ReportBody.self).id)
                    }
                }
                return try await group.reduce(into: [(HTTPResponse.Status, String)]()) { $0.append($1) }
            }
            #expect(Set(ids.map(\.1)).count == 1)
            #expect(ids.filter { $0.0 == .created || $0.0 == .accepted }.count == 1 && ids.filter { $0.0 == .ok }.count == 9)
            #expect(try await h.count("SELECT count(*)::int FROM content.reports") == 1)
            #expect(try await h.count("SELECT count(*)::int FROM content.report_purchases") == 1)

            // Replayed later with other birth data: still the report that transaction bought.
            let replay = try await h.buy(user, jws: jws, birth: #"{"date":"1991-01-01","time":"10:00","place":{"id":703448}}"#)
            #expect(try replay.status == .ok && (replay.decode(ReportBody.self).id) == ids[0].1)
            // Another transaction for the same chart and area: recorded, and the existing report comes back.
            let again = try await h.buy(user, jws: try h.transaction(store, for: user))
            #expect(try again.status == .ok && (again.decode(ReportBody.self).id) == ids[0].1, "\(String(buffer: again.body))")
            #expect(try await h.count("SELECT count(*)::int FROM content.report_purchases") == 2)
            #expect(try await h.count("SELECT count(*)::int FROM content.reports") == 1)
        }
    }

    @Test("REFUND takes the report away, REFUND_REVERSED gives it back; a notification counts once; a forged one is refused")
    func refunds() async throws {
        let store = try TestAppStore()
        try await withStore(store) { h in
            let user = UUID()
            let transactionId = "2000000123456789"
            let report = try await h.buy(user, jws: try h.transaction(store, for: user, id: transactionId)).decode(ReportBody.self)
            func notify(_ type: String, uuid: String = UUID().uuidString.lowercased(), by signer: TestAppStore? = nil) async throws -> TestResponse {
                let signer = signer ?? store
                var inner = signer.transaction(bundleId: bundle, productId: "\(bundle).report.career", accountToken: user, signedAt: h.time.now,
                                               revokedAt: type == "REFUND_REVERSED" ? nil : h.time.now)
                inner.transactionId = transactionId
                let notification = SignedNotification(
                    notificationType: type, notificationUUID: uuid,
                    data: .init(appAppleId: 1, bundleId: bundle, environment: .sandbox, signedTransactionInfo: try signer.sign(inner)),
                    signedDate: Int64(h.time.now.timeIntervalSince1970 * 1000))
                return try await h.client.execute(uri: "/v1/appstore/notifications", method: .post, headers: [.contentType: "application/json"],
                                                  body: ByteBuffer(string: #"{"signedPayload":"\#(try signer.sign(notification))"}"#))
            }
            let forged = try await notify("REFUND", by: try TestAppStore())
            #expect(forged.status == .unprocessableContent)
            #expect(try await h.request(.get, "/v1/reports/\(report.id)", as: user, app: .astrosvitla).status == .ok)

            let uuid = UUID().uuidString.lowercased()
            #expect(try await notify("REFUND", uuid: uuid).status == .ok)
            let revoked = try await h.request(.get, "/v1/reports/\(report.id)", as: user, app: .astrosvitla)
            #expect(try revoked.status == .forbidden && (revoked.decode(ProblemBody.self).code) == "report_revoked")
            let catalogue = try await h.request(.get, "/v1/reports/areas?chart=\(report.chart)", as: user, app: .astrosvitla).decode(CatalogueBody.self)
            #expect(catalogue.areas.allSatisfy { !$0.purchased })

            // Apple retries with the same notificationUUID: handled once (and a reversal in between is not undone).
            #expect(try await notify("REFUND_REVERSED").status == .ok)
            #expect(try await h.request(.get, "/v1/reports/\(report.id)", as: user, app: .astrosvitla).status == .ok)
            #expect(try await notify("REFUND", uuid: uuid).status == .ok)
            #expect(try await h.request(.get, "/v1/reports/\(report.id)", as: user, app: .astrosvitla).status == .ok)
            #expect(try await h.count("SELECT count(*)::int FROM content.appstore_notifications") == 2)
            // Anything else is acknowledged.
            #expect(try await notify("CONSUMPTION_REQUEST").status == .ok)
        }
    }

    @Test("a refund sticks: the pre-refund transaction posted again is 409 transaction_revoked on every path, a pending refunded report is neither written nor announced, a reversal gives it back")
    func refundSticks() async throws {
        let store = try TestAppStore()
        try await withStore(store) { h in
            let user = UUID()
            let transactionId = "2000000987654321"
            // The JWS the app posted before the refund: no revocationDate, valid for APPSTORE_MAX_AGE_DAYS.
            let preRefund = try h.transaction(store, for: user, id: transactionId)
            let bought = try await h.buy(user, jws: preRefund)
            #expect(bought.status == .created)
            let report = try bought.decode(ReportBody.self)
            func notify(_ type: String) async throws {
                var inner = store.transaction(bundleId: bundle, productId: "\(bundle).report.career", accountToken: user, signedAt: h.time.now,
                                              revokedAt: type == "REFUND_REVERSED" ? nil : h.time.now)
                inner.transactionId = transactionId
                let notification = SignedNotification(
                    notificationType: type, notificationUUID: UUID().uuidString.lowercased(),
                    data: .init(appAppleId: 1, bundleId: bundle, environment: .sandbox, signedTransactionInfo: try store.sign(inner)),
                    signedDate: Int64(h.time.now.timeIntervalSince1970 * 1000))
                let response = try await h.client.execute(uri: "/v1/appstore/notifications", method: .post, headers: [.contentType: "application/json"],
                                                          body: ByteBuffer(string: #"{"signedPayload":"\#(try store.sign(notification))"}"#))
                #expect(response.status == .ok)
            }
            try await notify("REFUND")

            // The replay: a problem, not the report; nothing new recorded.
            let replay = try await h.buy(user, jws: preRefund)
            #expect(replay.status == .conflict, "\(String(buffer: replay.body))")
            let problem = try replay.decode(ProblemBody.self)
            #expect(problem.code == "transaction_revoked" && !String(buffer: replay.body).contains("sections"))
            #expect(try await h.count("SELECT count(*)::int FROM content.report_purchases") == 1)
            // Every other path agrees.
            for path in ["/v1/reports/\(report.id)", "/v1/reports/\(report.id)/text"] {
                let response = try await h.request(.get, path, as: user, app: .astrosvitla)
                #expect(try response.status == .forbidden && (response.decode(ProblemBody.self).code) == "report_revoked", "\(path)")
            }
            let pdf = try await h.request(.post, "/v1/reports/\(report.id)/pdf", as: user, app: .astrosvitla, json: #"{"birth":\#(birth)}"#)
            #expect(try pdf.status == .forbidden && (pdf.decode(ProblemBody.self).code) == "report_revoked")
            struct List: Decodable { struct Chart: Decodable { var reports: [ReportBody] }; var charts: [Chart] }
            #expect(try await h.request(.get, "/v1/reports", as: user, app: .astrosvitla).decode(List.self).charts.isEmpty)

            // Refunded while still pending (as if the purchase request had died): the retrier leaves it alone and no
            // report_ready frame goes out, until a reversal makes it due again.
            let due = RFC3339.string(from: h.time.now.addingTimeInterval(-86_400))
            _ = try await h.scalar("""
                UPDATE content.reports SET status = 'pending', sections = NULL, ready_at = NULL, next_attempt_at = '\(due)'::timestamptz
                WHERE id = '\(report.id)' RETURNING 1
                """, as: Int.self)
            try await Task.sleep(for: .seconds(3))
            #expect(try await h.scalar("SELECT status FROM content.reports WHERE id = '\(report.id)'", as: String.self) == "pending")
            try await notify("REFUND_REVERSED")
            let written = try await eventually { try await h.scalar("SELECT status FROM content.reports WHERE id = '\(report.id)'", as: String.self) == "ready" }
            #expect(written, "the reversal made the report due again")
            let again = try await h.buy(user, jws: preRefund)
            #expect(try again.status == .ok && (again.decode(ReportBody.self).id) == report.id)
        }
    }

    @Test("a transactionId recorded for another account is 409 transaction_owned_elsewhere, never that account's report; the same id in Sandbox and in Production are two transactions")
    func transactionOwnedElsewhere() async throws {
        let store = try TestAppStore(now: ContentHarness.monday0900)
        try await withStore(store) { h in
            let first = UUID(), second = UUID()
            let transactionId = "2000000555555555"
            let bought = try await h.buy(first, jws: try h.transaction(store, for: first, id: transactionId, environment: .production))
            #expect(bought.status == .created, "\(String(buffer: bought.body))")
            let report = try bought.decode(ReportBody.self)

            // The second account's own, validly signed transaction (its appAccountToken), carrying the first's id.
            let collision = try await h.buy(second, jws: try h.transaction(store, for: second, id: transactionId, environment: .production))
            #expect(collision.status == .conflict, "\(String(buffer: collision.body))")
            let problem = try collision.decode(ProblemBody.self)
            #expect(problem.code == "transaction_owned_elsewhere" && problem.errors?.map(\.field) == ["transaction"])
            let text = String(buffer: collision.body)
            #expect(!text.contains(report.id) && !text.contains(report.chart) && !text.contains("sections"))
            #expect(try await h.count("SELECT count(*)::int FROM content.report_purchases") == 1)
            #expect(try await h.count("SELECT count(*)::int FROM content.reports") == 1)
            // Posted again, or by the owner: the same answers.
            #expect(try await h.buy(second, jws: try h.transaction(store, for: second, id: transactionId, environment: .production)).status == .conflict)
            let owner = try await h.buy(first, jws: try h.transaction(store, for: first, id: transactionId, environment: .production))
            #expect(try owner.status == .ok && (owner.decode(ReportBody.self).id) == report.id)

            // The same id in the sandbox is another transaction: the second account's own report.
            let sandbox = try await h.buy(second, jws: try h.transaction(store, for: second, id: transactionId, environment: .sandbox))
            #expect(sandbox.status == .created, "\(String(buffer: sandbox.body))")
            let sandboxReport = try sandbox.decode(ReportBody.self)
            #expect(sandboxReport.id != report.id)
            #expect(try await h.count("SELECT count(*)::int FROM content.report_purchases") == 2)
            // …and now the sandbox transaction is the second account's: the first account gets 409 for it.
            let back = try await h.buy(first, jws: try h.transaction(store, for: first, id: transactionId, environment: .sandbox))
            #expect(try back.status == .conflict && (back.decode(ProblemBody.self).code) == "transaction_owned_elsewhere")

            // A refund in the sandbox takes the sandbox purchase only; production's report stays.
            #expect(try await h.notify(store, "REFUND", transactionId: transactionId, for: second, environment: .sandbox).status == .ok)
            let refunded = try await h.request(.get, "/v1/reports/\(sandboxReport.id)", as: second, app: .astrosvitla)
            #expect(try refunded.status == .forbidden && (refunded.decode(ProblemBody.self).code) == "report_revoked")
            #expect(try await h.request(.get, "/v1/reports/\(report.id)", as: first, app: .astrosvitla).status == .ok)
        }
    }

    @Test("App Store notifications apply in the order Apple signed them: a REFUND_REVERSED signed before the REFUND leaves the report revoked, one signed after restores it, and an older REFUND arriving last takes nothing away")
    func notificationsInSignedOrder() async throws {
        let store = try TestAppStore(now: ContentHarness.monday0900)
        try await withStore(store) { h in
            let user = UUID()
            let now = h.time.now
            let fiveDaysAgo = now.addingTimeInterval(-5 * 86_400)
            func buy(_ area: String, _ transactionId: String) async throws -> ReportBody {
                let response = try await h.buy(user, jws: try h.transaction(store, for: user, area: area, id: transactionId), area: area)
                #expect(response.status == .created, "\(String(buffer: response.body))")
                return try response.decode(ReportBody.self)
            }
            func status(_ report: ReportBody) async throws -> HTTPResponse.Status {
                try await h.request(.get, "/v1/reports/\(report.id)", as: user, app: .astrosvitla).status
            }

            // REFUND signed now, then a REFUND_REVERSED signed five days earlier (a late retry): still revoked.
            let career = try await buy("career", "2000000600000001")
            #expect(try await h.notify(store, "REFUND", transactionId: "2000000600000001", for: user, area: "career", signedAt: now).status == .ok)
            #expect(try await status(career) == .forbidden)
            let late = try await h.notify(store, "REFUND_REVERSED", transactionId: "2000000600000001", for: user, area: "career", signedAt: fiveDaysAgo)
            #expect(late.status == .ok, "Apple is told it was handled")
            #expect(try await status(career) == .forbidden, "an older reversal does not undo a newer refund")
            #expect(try await h.scalar("SELECT revocation FROM content.report_purchases WHERE report_id = '\(career.id)'", as: String.self) == "REFUND")

            // The other order: REFUND signed five days ago, REFUND_REVERSED signed now: restored.
            let health = try await buy("health", "2000000600000002")
            #expect(try await h.notify(store, "REFUND", transactionId: "2000000600000002", for: user, area: "health", signedAt: fiveDaysAgo).status == .ok)
            #expect(try await status(health) == .forbidden)
            #expect(try await h.notify(store, "REFUND_REVERSED", transactionId: "2000000600000002", for: user, area: "health", signedAt: now).status == .ok)
            #expect(try await status(health) == .ok)

            // The reversal signed now arrives first, the refund signed five days ago after it: nothing is taken away.
            let finances = try await buy("finances", "2000000600000003")
            #expect(try await h.notify(store, "REFUND_REVERSED", transactionId: "2000000600000003", for: user, area: "finances", signedAt: now).status == .ok)
            #expect(try await h.notify(store, "REFUND", transactionId: "2000000600000003", for: user, area: "finances", signedAt: fiveDaysAgo).status == .ok)
            #expect(try await status(finances) == .ok, "an older refund does not undo a newer reversal")

            // Every notification was handled (recorded once), whether it applied or not.
            #expect(try await h.count("SELECT count(*)::int FROM content.appstore_notifications") == 6)
        }
    }

    @Test("user.deleted erases reports and purchases; the transaction's tombstone stops it being redeemed again")
    func deletion() async throws {
        let store = try TestAppStore()
        try await withStore(store) { h in
            let user = UUID()
            let jws = try h.transaction(store, for: user, id: "2000000900000001")
            #expect(try await h.buy(user, jws: jws).status == .created)
            try await h.identityEvent("user.deleted", subject: user, data: .object(["userId": .string(user.uuidString.lowercased()), "app": .string("astrosvitla")]))
            try await eventually { try await h.count("SELECT count(*)::int FROM content.reports") == 0 }
            #expect(try await h.count("SELECT count(*)::int FROM content.report_purchases") == 0)
            #expect(try await h.count("SELECT count(*)::int FROM content.redeemed_transactions") == 1)
            // The erased account's token still checks out here (the harness has no identity to mark it): its write is
            // fenced off all the same (#44 item 1), and nothing is recorded.
            let again = try await h.buy(user, jws: jws)
            #expect(try again.status == .unauthorized && (again.decode(ProblemBody.self).code) == "account_deleted")
            #expect(try await h.count("SELECT count(*)::int FROM content.reports") == 0)
            // The same transaction for another account: the tombstone answers, before anything else is looked at.
            let other = UUID()
            let replayed = try await h.buy(other, jws: try h.transaction(store, for: other, id: "2000000900000001"))
            #expect(try replayed.status == .conflict && (replayed.decode(ProblemBody.self).code) == "transaction_redeemed")
        }
    }

    @Test("PDF: A4 with the chart drawn from the birth data sent again (another chart's refused), the report's own sentences in Ukrainian read back by pdftotext, fonts embedded, under 500 KB")
    func pdf() async throws {
        let store = try TestAppStore()
        try await withStore(store) { h in
            let user = UUID()
            let report = try await h.buy(user, jws: try h.transaction(store, for: user), language: "uk").decode(ReportBody.self)
            // Another chart's birth data does not draw this report's chart, and costs one call to astrology, which
            // compares the fingerprint before drawing (it was a chart and a drawing before the 422).
            let calls = h.astrology.natalRequests.load(ordering: .relaxed)
            let other = try await h.request(.post, "/v1/reports/\(report.id)/pdf", as: user, app: .astrosvitla,
                                            json: #"{"birth":{"date":"1991-01-01","time":"10:00","place":{"id":703448}}}"#)
            #expect(try other.status == .unprocessableContent && other.decode(ProblemBody.self).code == "chart_mismatch")
            #expect(h.astrology.natalRequests.load(ordering: .relaxed) == calls + 1)
            let noBirth = try await h.request(.post, "/v1/reports/\(report.id)/pdf", as: user, app: .astrosvitla, json: "{}")
            #expect(noBirth.status == .unprocessableContent)
            let response = try await h.request(.post, "/v1/reports/\(report.id)/pdf", as: user, app: .astrosvitla, json: #"{"birth":\#(birth)}"#)
            #expect(response.status == .ok && response.headers[.contentType] == "application/pdf")
            let pdf = Data(buffer: response.body)
            #expect(pdf.count < 500_000)
            let text = try await PDFTools.text(pdf).replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "  ", with: " ")
            let sections = try #require(report.sections)
            #expect(text.contains(report.title) && text.contains("Практичні рекомендації"))
            for sentence in sections.keyInfluences.split(separator: ".").map({ $0.trimmingCharacters(in: .whitespaces) }).filter({ $0.count > 20 }) {
                #expect(text.contains(sentence), "\(sentence)")
            }
            for tip in sections.recommendations { #expect(text.contains(String(tip.prefix(40))), "\(tip)") }
            #expect(try await PDFTools.fonts(pdf).allSatisfy { $0.contains(" yes yes ") })
            #expect(try await PDFTools.info(pdf)["Page size"]?.hasPrefix("595.276 x 841.89") == true)
            if let folder = ProcessInfo.processInfo.environment["LANTERN_PDF_PREVIEW"] {
                try await PDFTools.png(pdf, page: 1, dpi: 70, to: URL(fileURLWithPath: folder).appendingPathComponent("report-uk-1.png"))
                try await PDFTools.png(pdf, page: 2, dpi: 70, to: URL(fileURLWithPath: folder).appendingPathComponent("report-uk-2.png"))
            }
            // No positions are kept: the picture came from the birth data of this request.
            #expect(try await h.count("SELECT count(*)::int FROM information_schema.columns WHERE table_schema = 'content' AND column_name LIKE '%svg%'") == 0)
        }
    }

    @Test("PDFs past RENDERS_PER_ACCOUNT_PER_MINUTE are 429 render_limited, counted after the body's checks and before astrology is asked")
    func pdfRenderLimit() async throws {
        let store = try TestAppStore()
        try await withStore(store, extra: ["RENDERS_PER_ACCOUNT_PER_MINUTE": "1"]) { h in
            let user = UUID()
            let report = try await h.buy(user, jws: try h.transaction(store, for: user)).decode(ReportBody.self)
            let path = "/v1/reports/\(report.id)/pdf"
            #expect(try await h.request(.post, path, as: user, app: .astrosvitla, json: "{}").status == .unprocessableContent,
                    "a malformed body is refused before it counts")
            #expect(try await h.request(.post, path, as: user, app: .astrosvitla, json: #"{"birth":\#(birth)}"#).status == .ok)
            let calls = h.astrology.natalRequests.load(ordering: .relaxed)
            let limited = try await h.request(.post, path, as: user, app: .astrosvitla, json: #"{"birth":\#(birth)}"#)
            #expect(limited.status == .tooManyRequests && Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            #expect(try limited.decode(ProblemBody.self).code == "render_limited")
            #expect(h.astrology.natalRequests.load(ordering: .relaxed) == calls, "a refused render costs astrology nothing")
        }
    }

    @Test("a pending report is written by the retrier and the app is told on its socket (report_ready)")
    func retrier() async throws {
        let store = try TestAppStore()
        try await withStore(store) { h in
            let user = UUID()
            let report = try await h.buy(user, jws: try h.transaction(store, for: user)).decode(ReportBody.self)
            // As if the request had died after recording the purchase. Due a day before the service's (manual) clock,
            // not the database's: the real date moves on, the harness's does not.
            let due = RFC3339.string(from: h.time.now.addingTimeInterval(-86_400))
            _ = try await h.scalar("""
                UPDATE content.reports SET status = 'pending', sections = NULL, ready_at = NULL, next_attempt_at = '\(due)'::timestamptz
                WHERE id = '\(report.id)' RETURNING 1
                """, as: Int.self)
            let written = try await eventually { try await h.scalar("SELECT status FROM content.reports WHERE id = '\(report.id)'", as: String.self) == "ready" }
            #expect(written, "the retrier wrote the pending report")
            // The frame travels through the outbox: it reaches the stream shortly after the report is ready. Delivery
            // is at least once (a relay cancelled after XADD publishes the row again; consumers go by event id), so
            // frames are counted by their envelope's id.
            @Sendable func readyFrames() async throws -> [RealtimeFrame] {
                let frames = try await h.redis.send(["XRANGE", h.streams.name(of: .realtime), "-", "+"])
                let texts = (frames.array ?? []).compactMap { $0.array?[1].array?[1].string }
                var seen = Set<UUID>()
                return texts.compactMap { try? EventEnvelope.decode($0) }.filter { seen.insert($0.id).inserted }
                    .compactMap { try? $0.payload(as: RealtimeFrame.self) }.filter { $0.type == "report_ready" }
            }
            try await eventually { try await readyFrames().count >= 2 }
            let ready = try await readyFrames()
            #expect(ready.count == 2 && ready.allSatisfy { $0.recipients == [user.uuidString.lowercased()] && $0.app == .astrosvitla }, "\(ready)")
        }
    }
}

extension String {
    /// base64url → base64 with padding.
    var base64Padded: String {
        var text = replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        return text
    }
}
