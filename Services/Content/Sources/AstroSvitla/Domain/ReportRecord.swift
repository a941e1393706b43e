import Foundation

/// A report as stored: what was bought, its state, and (when ready) its sections.
struct ReportRecord: Sendable, Equatable {
    enum Status: String, Codable, Sendable { case pending, ready, failed }

    var id: UUID
    var user: UUID
    /// The chart's fingerprint.
    var chart: String
    var area: LifeArea
    var language: ReportLanguage
    var status: Status
    var timeKnown: Bool
    var rules: StoredRules
    var sections: ReportSections?
    var source: String?
    var failedAttempts: Int
    var failure: String?
    var supportCode: String?
    var createdAt: Date
    var readyAt: Date?
    /// The earliest purchase that still gives access, or nil when every purchase of it was refunded or revoked.
    var purchasedAt: Date?
    var priceUSD: String?

    var revoked: Bool { purchasedAt == nil }
}

/// The ranked rules of a chart, by id: for the report's area and for any area (what fills a short analysis).
struct StoredRules: Codable, Sendable, Equatable {
    struct Entry: Codable, Sendable, Equatable {
        var id: String
        var score: Double
        var point: String
        var tightness: Double
    }

    var area: [Entry]
    var all: [Entry]

    init(area: [MatchedRule], all: [MatchedRule]) {
        let entry = { (m: MatchedRule) in Entry(id: m.rule.id, score: m.score, point: m.point, tightness: m.tightness) }
        self.area = area.map(entry)
        self.all = all.map(entry)
    }

    /// Back to matched rules; a rule no longer in the book (renamed since) is skipped.
    func matches(in book: RuleBook) -> (area: [MatchedRule], all: [MatchedRule]) {
        let rebuild = { (e: Entry) in book.byId[e.id].map { MatchedRule(rule: $0, score: e.score, point: e.point, tightness: e.tightness) } }
        return (area.compactMap(rebuild), all.compactMap(rebuild))
    }
}

/// An App Store transaction as stored: the SHA-256 of its `transactionId`, within its environment (`Production`,
/// `Sandbox`, `Xcode`, `LocalTesting`). The pair is the key: an id of the sandbox never meets the same id of
/// production.
struct TransactionKey: Sendable, Equatable {
    var hash: Data
    var environment: String
}

/// A verified purchase, ready to be recorded.
struct PurchaseEntry: Sendable {
    /// SHA-256 of the App Store transaction id.
    var transactionHash: Data
    var user: UUID
    var productId: String
    /// The transaction's App Store environment: with `transactionHash`, the purchase's key.
    var environment: String
    var priceUSD: String
    var purchasedAt: Date
}

/// What recording a purchase found.
enum PurchaseOutcome: Sendable, Equatable {
    /// A new report, pending: write it now.
    case created(ReportRecord)
    /// The same transaction again, or another purchase of an area this chart already has: its report.
    case existing(ReportRecord)
    /// The transaction belonged to an account that was deleted.
    case redeemed
    /// The transaction was recorded, and the App Store has refunded or revoked it since.
    case revoked
    /// The transaction (the same id in the same environment) was recorded for another account: nothing of that
    /// account's is answered.
    case ownedElsewhere
}

/// What an App Store notification did.
enum NotificationOutcome: Sendable, Equatable {
    /// REFUND or REVOKE applied to this many purchases (0: the transaction was never redeemed here).
    case revoked(reports: Int)
    /// REFUND_REVERSED applied to this many purchases.
    case restored(reports: Int)
    case acknowledged
    /// This `notificationUUID` was handled before.
    case duplicate
    /// Signed before the notification last applied to its transaction (Apple retries for days): nothing changed.
    case outdated
}

/// What the reports domain asks of storage (`ReportStore` in the service, in memory nowhere: tests use PostgreSQL).
protocol ReportRecords: Sendable {
    /// Records the purchase and finds or creates its report, under the account's lock; `newReport` is used only
    /// when the account has no report of that chart and area yet.
    func record(_ purchase: PurchaseEntry, newReport: ReportRecord, retryAt: Date) async throws -> PurchaseOutcome
    func report(_ id: UUID, of user: UUID) async throws -> ReportRecord?
    func reports(of user: UUID, chart: String?) async throws -> [ReportRecord]
    /// The areas of `chart` the user has a report of that a purchase still gives access to, and their ids.
    func purchasedAreas(of user: UUID, chart: String) async throws -> [LifeArea: UUID]
    /// Stores the finished sections (once: a ready report never changes) and tells the user's sockets.
    func finish(_ id: UUID, sections: ReportSections, source: String, at: Date) async throws
    /// A failed attempt: retry at `retryAt`, or, when nil, mark the report failed with `reason` and `supportCode`.
    func failed(_ id: UUID, reason: String, retryAt: Date?, supportCode: String, at: Date) async throws
    /// Pending reports whose retry is due, leased to this process until `until`.
    func leaseDue(now: Date, until: Date, limit: Int) async throws -> [ReportRecord]
    /// Applies a notification once per `notificationUUID`, to the purchase of `transaction`, unless the purchase
    /// had a notification signed after `signedAt` applied already (then `.outdated`, nothing changed).
    func apply(notification uuid: String, type: String, subtype: String?, transaction: TransactionKey?, signedAt: Date,
               at: Date) async throws -> NotificationOutcome
}
