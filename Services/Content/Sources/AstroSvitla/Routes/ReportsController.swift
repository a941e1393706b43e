import ContentKit
import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP
import LanternService
import Metrics
import NIOCore
import NIOFoundationCompat

/// AstroSvitla: `/v1/reports/areas` (catalogue), `/v1/reports/purchases`, `/v1/reports` (list) and
/// `/v1/reports/{id}` with its `text` and `pdf`.
struct ReportsController: Sendable {
    let reports: Reports
    /// Each PDF is a render (`RENDERS_PER_ACCOUNT_PER_MINUTE`).
    let renders: RenderLimit

    // MARK: Bodies

    struct Price: Encodable, Sendable {
        var amount: String
        var currency = "USD"
    }

    struct AreaBody: Encodable, Sendable {
        var area: String
        var icon: String
        var title: String
        var description: String
        var price: Price
        var productId: String
        /// Already bought for this chart: show "View Report" (FR-025).
        var purchased: Bool
        var reportId: String?
    }

    struct CatalogueBody: Encodable, Sendable {
        var language: String
        var chart: String?
        /// FR-026: each report is paid once; nothing renews.
        var pricing: String
        var areas: [AreaBody]
    }

    struct PurchaseRequest: Decodable {
        /// StoreKit 2's `Transaction.jwsRepresentation`.
        var transaction: String?
        var area: String?
        var language: String?
        var birth: BirthBody?
    }

    struct ReportBody: Encodable, Sendable {
        struct Failure: Encodable, Sendable {
            var reason: String
            var supportCode: String
        }
        var id: String
        var chart: String
        var area: String
        var title: String
        var language: String
        /// `pending` (being written: wait for the `report_ready` frame or ask again), `ready` or `failed`.
        var status: String
        var purchasedAt: Date?
        var price: Price?
        var createdAt: Date
        var readyAt: Date?
        var birthTimeKnown: Bool
        var notes: [String]
        var sections: ReportSections?
        var failure: Failure?
    }

    struct ListBody: Encodable, Sendable {
        struct Chart: Encodable, Sendable {
            var chart: String
            var reports: [ReportBody]
        }
        var charts: [Chart]
    }

    // MARK: Routes

    var endpoints: RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.get("areas", use: areas)
        routes.post("purchases", use: purchase)
        routes.get(use: list)
        routes.get(":id", use: report)
        routes.get(":id/text", use: text)
        routes.post(":id/pdf", use: pdf)
        return routes
    }

    @Sendable func areas(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<CatalogueBody> {
        let user = try user(context)
        let language = Self.language(request, body: nil)
        let chart = request.uri.queryParameters["chart"].map(String.init)
        if let chart { try Self.checkChart(chart, field: "chart") }
        let offers = try await reports.offers(for: user, chart: chart)
        return JSONResponse(CatalogueBody(
            language: language.rawValue, chart: chart,
            pricing: language == .uk ? "Кожен звіт купується один раз, без підписки." : "Each report is a one-time purchase; there is no subscription.",
            areas: offers.map { offer in
                AreaBody(area: offer.area.id.rawValue, icon: offer.area.icon, title: offer.area.title[language],
                         description: offer.area.description[language], price: Price(amount: offer.area.price), productId: offer.productId,
                         purchased: offer.reportId != nil, reportId: offer.reportId?.uuidString.lowercased())
            }))
    }

    @Sendable func purchase(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let arrival = ContinuousClock.now
        let user = try user(context)
        let body = try await request.decodeJSON(as: PurchaseRequest.self, context: context)
        var v = FieldValidator()
        v.check(!(body.transaction ?? "").isEmpty, "transaction", "is required: StoreKit 2's Transaction.jwsRepresentation")
        let area = body.area.flatMap(LifeArea.init(rawValue:))
        v.check(area != nil, "area", "must be one of \(LifeArea.allCases.map(\.rawValue).joined(separator: ", "))")
        BirthBody.check(body.birth, &v)
        try v.validate()
        guard let transaction = body.transaction, let area else { throw Problem.invalid([]) }
        let birth = try BirthBody.required(body.birth)
        let language = Self.language(request, body: body.language)
        let (report, created): (ReportRecord, Bool)
        do {
            (report, created) = try await reports.purchase(
                .init(transaction: transaction, area: area, language: language, birth: birth),
                by: user, arrival: arrival)
        } catch let unavailable as InternalUnavailable {
            // Nothing was recorded: the app keeps the StoreKit transaction unfinished and posts it again.
            context.logger.warning("purchase not recorded: no chart", metadata: ["reason": "\(unavailable)"])
            throw Problem(status: 503, code: "astrology_unavailable", title: "Service unavailable",
                          detail: "The chart cannot be computed right now; keep the transaction and try again in a minute.", retryAfter: 30)
        }
        if created {
            Counter(label: "lantern_astrosvitla_reports_total", dimensions: [("area", area.rawValue), ("source", report.source ?? "pending")]).increment()
        }
        let status: HTTPResponse.Status = !created ? .ok : report.status == .ready ? .created : .accepted
        var headers: HTTPFields = [.location: "/v1/reports/\(report.id.uuidString.lowercased())"]
        if report.status == .pending { headers[.retryAfter] = "2" }
        return try JSONResponse(present(report), status: status, headers: headers).response(from: request, context: context)
    }

    @Sendable func list(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<ListBody> {
        let user = try user(context)
        let chart = request.uri.queryParameters["chart"].map(String.init)
        if let chart { try Self.checkChart(chart, field: "chart") }
        let all = try await reports.records.reports(of: user, chart: chart).filter { !$0.revoked }
        var charts: [ListBody.Chart] = []
        for report in all {
            if charts.last?.chart != report.chart { charts.append(.init(chart: report.chart, reports: [])) }
            var summary = present(report)
            summary.sections = nil
            charts[charts.count - 1].reports.append(summary)
        }
        return JSONResponse(ListBody(charts: charts))
    }

    @Sendable func report(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let report = try await reports.report(try Self.id(context), of: try user(context))
        // A ready report never changes: the app may keep it (FR-043, FR-044) and revalidate cheaply.
        return try ConditionalResponse.json(present(report), for: request,
                                            cacheControl: report.status == .ready ? "private, max-age=86400" : "private, no-cache")
    }

    @Sendable func text(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let report = try await ready(context)
        let text = ReportText.plain(title: title(report), sections: report.sections ?? .init(keyInfluences: "", detailedAnalysis: "", recommendations: []),
                                    language: report.language)
        return Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "private, max-age=86400"],
                        body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    struct PDFRequest: Decodable {
        var birth: BirthBody?
    }

    /// The report as an A4 PDF (FR-047) with its chart drawn: the app sends the chart's birth data again (the server
    /// keeps no positions), and it must be the data of the report's chart.
    @Sendable func pdf(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let report = try await ready(context)
        let body = try await request.decodeJSON(as: PDFRequest.self, context: context)
        let birth = try BirthBody.required(body.birth)
        // The cheap checks first (the token, the report, the body); then the render counts.
        if let retryAfter = await renders.admit(try user(context)) { throw renders.problem(retryAfter: retryAfter) }
        let data: Data
        do { data = try await reports.pdf(report, birth: birth) } catch let unavailable as InternalUnavailable {
            context.logger.warning("PDF not rendered: no chart", metadata: ["reason": "\(unavailable)"])
            throw Problem(status: 503, code: "astrology_unavailable", title: "Service unavailable",
                          detail: "The chart cannot be drawn right now; try again in a minute.", retryAfter: 30)
        }
        let name = "astrosvitla-\(report.area.rawValue)-\(report.language.rawValue).pdf"
        return Response(status: .ok, headers: [.contentType: "application/pdf", .cacheControl: "private, no-store",
                                               .contentDisposition: "inline; filename=\"\(name)\""],
                        body: .init(byteBuffer: ByteBuffer(data: data)))
    }

    // MARK: Helpers

    private func ready(_ context: LanternRequestContext) async throws -> ReportRecord {
        let report = try await reports.report(try Self.id(context), of: try user(context))
        guard report.status == .ready, report.sections != nil else {
            throw Problem.conflict(report.status == .pending ? "The report is still being written" : "The report could not be written",
                                   code: report.status == .pending ? "report_pending" : "report_failed")
        }
        return report
    }

    private func title(_ report: ReportRecord) -> String { reports.catalogue.area(report.area).title[report.language] }

    private func present(_ report: ReportRecord) -> ReportBody {
        var notes: [String] = []
        if !report.timeKnown { notes.append(reports.writer.composer.texts.timeUnknown[report.language]) }
        return ReportBody(
            id: report.id.uuidString.lowercased(), chart: report.chart, area: report.area.rawValue, title: title(report),
            language: report.language.rawValue, status: report.status.rawValue, purchasedAt: report.purchasedAt,
            price: report.priceUSD.map { Price(amount: $0) }, createdAt: report.createdAt, readyAt: report.readyAt,
            birthTimeKnown: report.timeKnown, notes: notes, sections: report.sections,
            failure: report.status == .failed ? .init(reason: report.failure ?? "the report could not be written",
                                                       supportCode: report.supportCode ?? Reports.supportCode(report.id)) : nil)
    }

    /// The request's language: the body's, else `Accept-Language`'s; anything but English or Ukrainian is English.
    static func language(_ request: Request, body: String?) -> ReportLanguage {
        if let body { return ReportLanguage(rawValue: body.lowercased().split(separator: "-").first.map(String.init) ?? "") ?? .en }
        if let query = request.uri.queryParameters["language"] { return ReportLanguage(rawValue: String(query).lowercased()) ?? .en }
        return ReportLanguage.preferred(acceptLanguage: request.headers[.acceptLanguage])
    }

    /// A fingerprint is 64 hex digits (HMAC-SHA256).
    static func checkChart(_ chart: String, field: String) throws {
        guard chart.utf8.count == 64, chart.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            throw Problem.invalid(field: field, "must be a chart fingerprint (64 lower-case hex digits, `fingerprint` of the chart)")
        }
    }

    static func id(_ context: LanternRequestContext) throws -> UUID {
        guard let text = context.parameters.get("id"), let id = UUID(uuidString: text) else { throw Problem.notFound("No such report") }
        return id
    }

    private func user(_ context: LanternRequestContext) throws -> UUID {
        try context.requireUser(of: .astrosvitla, otherwise: .forbidden("Reports are an AstroSvitla feature.", code: "reports_not_available"))
    }
}

/// `POST /v1/appstore/notifications`: App Store Server Notifications V2. Public (Apple signs, nobody signs in);
/// 200 once handled, already handled, or outdated (signed before the one last applied to its transaction), so
/// Apple stops retrying; 4xx when the signature does not verify.
struct AppStoreNotificationsController: Sendable {
    let reports: Reports

    struct Body: Decodable {
        var signedPayload: String?
    }

    var endpoints: RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.post(use: receive)
        return routes
    }

    @Sendable func receive(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(as: Body.self, context: context)
        guard let payload = body.signedPayload, !payload.isEmpty else { throw Problem.invalid(field: "signedPayload", "is required") }
        let outcome = try await reports.notification(payload)
        Counter(label: "lantern_appstore_notifications_total", dimensions: [("outcome", "\(outcome)".prefix { $0 != "(" }.description)]).increment()
        return Response(status: .ok)
    }
}

extension ReportRefusal: ProblemConvertible {
    /// The answer the API document promises for each refusal.
    var problem: Problem {
        switch self {
        case .transactionInvalid(let reason): Problem.invalid(field: "transaction", reason, code: "transaction_invalid")
        case .productMismatch(let reason): Problem.invalid(field: "area", reason, code: "transaction_product_mismatch")
        case .transactionRevoked: Problem.conflict("The App Store refunded or revoked this purchase", code: "transaction_revoked")
        case .transactionOfAnotherAccount: Problem.forbidden("This purchase was made for another account", code: "transaction_other_account")
        case .transactionRedeemed:
            Problem.conflict("This purchase belonged to a deleted account and cannot be redeemed again", code: "transaction_redeemed")
        case .transactionOwnedElsewhere:
            // Nothing of the other account's (its report, its state) is said: only that the transaction is taken.
            Problem(status: 409, code: "transaction_owned_elsewhere", title: "Conflict",
                    detail: "This App Store transaction was redeemed by another account",
                    errors: [Problem.FieldError(field: "transaction", message: "was redeemed by another account")])
        case .noSuchReport: Problem.notFound("No such report")
        case .reportRevoked: Problem.forbidden("The App Store refunded or revoked the purchase of this report", code: "report_revoked")
        case .reportPending: Problem.conflict("The report is still being written", code: "report_pending")
        case .chartMismatch: Problem.invalid(field: "birth", "is not the birth data of this report's chart", code: "chart_mismatch")
        case .notificationInvalid(let reason): Problem.invalid(field: "signedPayload", reason, code: "notification_invalid")
        }
    }
}
