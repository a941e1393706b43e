import ContentKit
import Crypto
import Foundation
import LanternAppStore
import LanternContracts
import LanternCore
import LanternLLM
import Logging

/// Why the reports domain refused (the routes answer each with its problem, `ReportRefusal.problem`).
enum ReportRefusal: Error, Equatable {
    /// The signed transaction did not verify, or is not a consumable; why, for a person.
    case transactionInvalid(String)
    /// The transaction bought another product than the area asked for.
    case productMismatch(String)
    /// A refunded or revoked transaction, whether its JWS says so or a notification told us after it was recorded.
    case transactionRevoked
    /// `appAccountToken` is not the caller.
    case transactionOfAnotherAccount
    /// The transaction was redeemed by an account since deleted.
    case transactionRedeemed
    /// The transaction (its id, in its environment) is recorded for another account.
    case transactionOwnedElsewhere
    case noSuchReport
    /// Every purchase of the report was refunded or revoked.
    case reportRevoked
    case reportPending
    /// The birth data sent for a PDF is not the report's chart's.
    case chartMismatch
    /// An App Store notification that did not verify; why.
    case notificationInvalid(String)
}

/// The natal chart of birth data, from astrology: its placements, and its picture.
protocol ChartSource: Sendable {
    func natalChart(_ birth: BirthData) async throws -> NatalChartSummary
    /// The chart drawn, only when its fingerprint is `fingerprint` (`ChartMismatch` otherwise, before any drawing).
    func natalChartPicture(_ birth: BirthData, fingerprint: String?) async throws -> String
}

/// AstroSvitla's reports (FR-021–FR-048): the catalogue, purchases verified with the App Store's signature and
/// recorded before anything is written, the report written within the request (model, one corrected retry, then
/// the local composition), background retries for what a request could not finish, and refunds.
struct Reports: Sendable {
    let catalogue: ReportCatalogue
    let matcher: RuleMatcher
    let writer: ReportWriter
    let verifier: SignedDataVerifier
    let charts: any ChartSource
    let records: any ReportRecords
    let clock: WallClock
    let logger: Logger
    /// Background retries: failed attempts before a report is marked failed, and the first delay (doubling).
    var maxAttempts = 5
    var firstRetry: TimeInterval = 30

    struct Offer: Sendable {
        var area: ReportCatalogue.Area
        var productId: String
        var reportId: UUID?
    }

    /// Every area with its price and product, and which of them this chart already has (FR-025).
    func offers(for user: UUID, chart: String?) async throws -> [Offer] {
        var bought: [LifeArea: UUID] = [:]
        if let chart { bought = try await records.purchasedAreas(of: user, chart: chart) }
        return catalogue.areas.map { Offer(area: $0, productId: catalogue.productId(for: $0.id), reportId: bought[$0.id]) }
    }

    struct Purchase: Sendable {
        /// StoreKit 2's `Transaction.jwsRepresentation`.
        var transaction: String
        var area: LifeArea
        var language: ReportLanguage
        var birth: BirthData
    }

    /// Verifies and records a purchase, then writes its report unless it exists: the same transaction, or the same
    /// area of the same chart bought again, returns the report already there (`created` false).
    /// - Parameter arrival: when the request came; the report is answered within `writer.budget` of it (FR-031).
    func purchase(_ purchase: Purchase, by user: UUID, arrival: ContinuousClock.Instant = .now) async throws -> (report: ReportRecord, created: Bool) {
        let transaction: SignedTransaction
        do { transaction = try await verifier.verifyTransaction(purchase.transaction) } catch {
            throw ReportRefusal.transactionInvalid(error.message)
        }
        guard transaction.productId == catalogue.productId(for: purchase.area) else {
            let bought = catalogue.area(forProduct: transaction.productId).map { "the \($0.rawValue) report" } ?? "'\(transaction.productId)'"
            throw ReportRefusal.productMismatch("the transaction bought \(bought), not the \(purchase.area.rawValue) report")
        }
        guard transaction.type == SignedTransaction.consumable else {
            throw ReportRefusal.transactionInvalid("is a \(transaction.type) purchase; reports are consumables")
        }
        guard transaction.revocationDate == nil else { throw ReportRefusal.transactionRevoked }
        // The app buys with `appAccountToken` = the account id, so one account's receipt is useless to another.
        guard transaction.appAccountToken?.lowercased() == user.uuidString.lowercased() else {
            throw ReportRefusal.transactionOfAnotherAccount
        }

        let chart = try await charts.natalChart(purchase.birth)
        let all = matcher.matches(chart)
        let forArea = all.filter { $0.rule.areas[purchase.area] != nil }
        let now = clock.now()
        let id = UUID.v7(at: now)
        let report = ReportRecord(
            id: id, user: user, chart: chart.fingerprint, area: purchase.area, language: purchase.language, status: .pending,
            timeKnown: chart.houses.reliable, rules: StoredRules(area: forArea, all: all), sections: nil, source: nil,
            failedAttempts: 0, failure: nil, supportCode: nil, createdAt: now, readyAt: nil, purchasedAt: nil, priceUSD: nil)
        let key = Self.key(transaction)
        let entry = PurchaseEntry(
            transactionHash: key.hash, user: user, productId: transaction.productId,
            environment: key.environment, priceUSD: catalogue.area(purchase.area).price,
            purchasedAt: Date(timeIntervalSince1970: Double(transaction.purchaseDate) / 1000))
        // Recorded first, due for a background retry: if this request dies while writing, the report still comes.
        switch try await records.record(entry, newReport: report, retryAt: now + firstRetry) {
        case .redeemed:
            throw ReportRefusal.transactionRedeemed
        case .ownedElsewhere:
            logger.warning("a purchase named a transaction recorded for another account",
                           metadata: ["user": "\(user)", "environment": "\(transaction.environment.rawValue)"])
            throw ReportRefusal.transactionOwnedElsewhere
        case .revoked:
            throw ReportRefusal.transactionRevoked
        case .existing(let existing):
            return (existing, false)
        case .created(let created):
            return (await write(created, deadline: arrival + writer.budget), true)
        }
    }

    /// Writes a pending report and stores it by `deadline` (a request's, or a full budget from now for the
    /// retrier); on a storage failure the report stays pending for the retrier.
    func write(_ report: ReportRecord, deadline: ContinuousClock.Instant? = nil) async -> ReportRecord {
        let (forArea, all) = report.rules.matches(in: matcher.book)
        let written = await writer.write(
            area: report.area, areaTitle: catalogue.area(report.area).title[report.language], language: report.language,
            matches: forArea, others: all, timeKnown: report.timeKnown, deadline: deadline ?? .now + writer.budget,
            seed: GenerationSeed("astrosvitla", report.chart, report.area.rawValue, report.language.rawValue))
        if !written.rejected.isEmpty {
            logger.info("report written after fallbacks", metadata: ["report": "\(report.id)", "source": "\(written.source)",
                                                                      "rejected": "\(written.rejected.joined(separator: " | "))"])
        }
        let problems = ReportShape.problems(written.sections, language: report.language)
        if !problems.isEmpty {
            logger.warning("local composition out of shape", metadata: ["report": "\(report.id)", "problems": "\(problems)"])
        }
        let now = clock.now()
        do {
            try await records.finish(report.id, sections: written.sections, source: written.source, at: now)
        } catch {
            logger.error("a written report could not be stored; the retrier will write it again", metadata: ["report": "\(report.id)", "error": "\(error)"])
            return report
        }
        var ready = report
        ready.status = .ready
        ready.sections = written.sections
        ready.source = written.source
        ready.readyAt = now
        return ready
    }

    /// Reports leased by one background pass.
    static let retryBatch = 16

    /// One background pass: writes the pending reports whose retry is due (up to `retryBatch`, side by side, as the
    /// requests that could not finish them would have); returns how many it leased.
    @discardableResult
    func retryDue(lease: TimeInterval = 60) async throws -> Int {
        let now = clock.now()
        let due = try await records.leaseDue(now: now, until: now + lease, limit: Self.retryBatch)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for report in due {
                group.addTask {
                    let attempt = report.failedAttempts + 1
                    let result = await write(report)
                    guard result.status != .ready else { return }
                    let final = attempt >= maxAttempts
                    let retryAt = final ? nil : clock.now() + firstRetry * pow(2, Double(attempt))
                    try await records.failed(report.id, reason: "the report could not be stored after \(attempt) attempts", retryAt: retryAt,
                                             supportCode: Self.supportCode(report.id), at: clock.now())
                }
            }
            try await group.waitForAll()
        }
        return due.count
    }

    func report(_ id: UUID, of user: UUID) async throws -> ReportRecord {
        guard let report = try await records.report(id, of: user) else { throw ReportRefusal.noSuchReport }
        guard !report.revoked else {
            throw ReportRefusal.reportRevoked
        }
        return report
    }

    /// The report as a PDF with its chart drawn from `birth`, which must be the birth data of the report's chart
    /// (astrology's fingerprint of it is the report's `chart`): positions are never stored, so the app sends them again.
    func pdf(_ report: ReportRecord, birth: BirthData) async throws -> Data {
        guard let sections = report.sections else { throw ReportRefusal.reportPending }
        // One call: astrology compares the fingerprint before it casts or draws anything, so birth data of another
        // chart costs no ephemeris work (it used to cost a chart and a drawing before its 422).
        let picture: String
        do { picture = try await charts.natalChartPicture(birth, fingerprint: report.chart) } catch is ChartMismatch {
            throw ReportRefusal.chartMismatch
        }
        var notes: [String] = []
        if !report.timeKnown { notes.append(writer.composer.texts.timeUnknown[report.language]) }
        return try await ReportPDF.render(title: catalogue.area(report.area).title[report.language], sections: sections,
                                          chartSVG: picture, language: report.language, notes: notes,
                                          writtenAt: report.readyAt ?? report.createdAt)
    }

    /// An App Store Server Notification V2 (`signedPayload`): REFUND and REVOKE take the report away, REFUND_REVERSED
    /// gives it back, anything else is acknowledged. Each `notificationUUID` counts once, and per transaction they
    /// apply in the order Apple signed them (`signedDate`): one signed before the last applied changes nothing.
    func notification(_ signedPayload: String) async throws -> NotificationOutcome {
        let verified: (notification: SignedNotification, transaction: SignedTransaction?)
        do { verified = try await verifier.verifyNotification(signedPayload) } catch {
            throw ReportRefusal.notificationInvalid(error.message)
        }
        let (notification, transaction) = verified
        let outcome = try await records.apply(
            notification: notification.notificationUUID, type: notification.notificationType, subtype: notification.subtype,
            transaction: transaction.map { Self.key($0) },
            signedAt: Date(timeIntervalSince1970: Double(notification.signedDate) / 1000), at: clock.now())
        logger.info("App Store notification", metadata: ["type": "\(notification.notificationType)", "subtype": "\(notification.subtype ?? "-")",
                                                        "uuid": "\(notification.notificationUUID)", "outcome": "\(outcome)"])
        return outcome
    }

    static func hash(_ transactionId: String) -> Data { Data(SHA256.hash(data: Data(transactionId.utf8))) }

    /// A verified transaction's key: the hash of its id within its environment (a sandbox id never meets a
    /// production one).
    static func key(_ transaction: SignedTransaction) -> TransactionKey {
        TransactionKey(hash: hash(transaction.transactionId), environment: transaction.environment.rawValue)
    }

    /// What a user quotes to support: short, and enough to find the report.
    static func supportCode(_ id: UUID) -> String {
        "AS-" + id.uuidString.replacingOccurrences(of: "-", with: "").suffix(10).uppercased()
    }
}
