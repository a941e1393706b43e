import ContentKit
import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import Logging
import PostgresNIO

/// AstroSvitla's reports and purchases (`content.reports`, `content.report_purchases`), the tombstones of deleted
/// accounts' transactions and the App Store notifications handled. A report becoming ready or failed and its
/// real-time frame commit together. A transaction is known by its key (`TransactionKey`: the hash of its id and its
/// App Store environment), never by its id alone.
struct ReportStore: ReportRecords {
    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger

    /// The columns `decode` reads, with the access-giving purchase (earliest not revoked) joined in.
    private static let select = """
        SELECT r.id, r.user_id, r.chart, r.area, r.language, r.status, r.time_known, r.rules::text, r.sections::text,
               r.source, r.failed_attempts, r.failure, r.support_code, r.created_at, r.ready_at, p.purchased_at, p.price_usd
        FROM content.reports r
        LEFT JOIN LATERAL (SELECT purchased_at, price_usd FROM content.report_purchases
                           WHERE report_id = r.id AND revoked_at IS NULL ORDER BY purchased_at LIMIT 1) p ON true
        """

    private static func decode(_ row: PostgresRow) throws -> ReportRecord {
        let (id, user, chart, area, language, status, timeKnown, rules, sections, source, failed, failure, support, created, ready, purchased, price) =
            try row.decode((UUID, UUID, String, String, String, String, Bool, String, String?, String?, Int, String?, String?, Date, Date?, Date?, String?).self)
        guard let area = LifeArea(rawValue: area), let language = ReportLanguage(rawValue: language),
              let status = ReportRecord.Status(rawValue: status) else { throw StoreInconsistency("report \(id) has an unknown area, language or status") }
        return ReportRecord(
            id: id, user: user, chart: chart, area: area, language: language, status: status, timeKnown: timeKnown,
            rules: try JSONDecoder().decode(StoredRules.self, from: Data(rules.utf8)),
            sections: try sections.map { try JSONDecoder().decode(ReportSections.self, from: Data($0.utf8)) }, source: source,
            failedAttempts: failed, failure: failure, supportCode: support, createdAt: created, readyAt: ready, purchasedAt: purchased,
            priceUSD: price)
    }

    private func one(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> ReportRecord? {
        for try await row in try await connection.query(query, logger: logger) { return try Self.decode(row) }
        return nil
    }

    func record(_ purchase: PurchaseEntry, newReport: ReportRecord, retryAt: Date) async throws -> PurchaseOutcome {
        let rules = String(decoding: try JSONEncoder().encode(newReport.rules), as: UTF8.self)
        // Admitted past the erasure fence first (`ErasedUsers`), as the erasure takes it first: no lock cycle.
        return try await client.transaction(admitting: purchase.user, schema: ContentSchema.name, logger: logger) { connection -> PurchaseOutcome in
            // One account's purchases one at a time: a replay with other birth data, or two concurrent posts of the
            // same transaction, must find what the first one recorded.
            try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(purchase.user.uuidString), 11))", logger: logger)
            // And the transaction's own lock (after the account's, never before: no cycle): two accounts posting
            // one transaction key at once, the second finds the first's purchase instead of failing on its key.
            try await connection.query("""
                SELECT pg_advisory_xact_lock(hashtextextended(\(purchase.environment) || ':' || encode(\(purchase.transactionHash), 'hex'), 12))
                """, logger: logger)
            // A tombstone without an environment was written before 0008 (it could not be told afterwards): it
            // stands for the transaction id in every environment.
            let redeemed = try await connection.query("""
                SELECT 1 FROM content.redeemed_transactions
                WHERE transaction_hash = \(purchase.transactionHash) AND (environment = \(purchase.environment) OR environment IS NULL)
                """, logger: logger)
            for try await _ in redeemed { return .redeemed }
            // This transaction (its id in its environment) again: its own report, unless it was recorded for
            // another account (then nothing of that account's), or the App Store has taken that purchase back since
            // (the pre-refund JWS stays valid for days, so a replay must not undo a refund).
            let known = try await connection.query("""
                SELECT user_id, report_id, revoked_at IS NOT NULL FROM content.report_purchases
                WHERE transaction_hash = \(purchase.transactionHash) AND environment = \(purchase.environment)
                """, logger: logger)
            var recorded: (user: UUID, report: UUID, revoked: Bool)?
            for try await row in known.decode((UUID, UUID, Bool).self) { recorded = row }
            if let recorded {
                guard recorded.user == purchase.user else { return .ownedElsewhere }
                if recorded.revoked { return .revoked }
                guard let existing = try await one("\(unescaped: Self.select) WHERE r.id = \(recorded.report)", on: connection) else {
                    throw StoreInconsistency("the report of a recorded purchase is missing")
                }
                return .existing(existing)
            }
            // The account's report of this chart and area, or the new one.
            let inserted = try await connection.query("""
                INSERT INTO content.reports (id, user_id, chart, area, language, status, time_known, rules, next_attempt_at, created_at)
                VALUES (\(newReport.id), \(newReport.user), \(newReport.chart), \(newReport.area.rawValue), \(newReport.language.rawValue),
                        'pending', \(newReport.timeKnown), \(rules)::jsonb, \(retryAt), \(newReport.createdAt))
                ON CONFLICT (user_id, chart, area) DO NOTHING RETURNING id
                """, logger: logger)
            var created = false
            for try await _ in inserted { created = true }
            try await connection.query("""
                INSERT INTO content.report_purchases (transaction_hash, user_id, report_id, product_id, environment, price_usd, purchased_at, recorded_at)
                SELECT \(purchase.transactionHash), \(purchase.user), id, \(purchase.productId), \(purchase.environment), \(purchase.priceUSD),
                       \(purchase.purchasedAt), \(newReport.createdAt)
                FROM content.reports WHERE user_id = \(newReport.user) AND chart = \(newReport.chart) AND area = \(newReport.area.rawValue)
                """, logger: logger)
            if !created {
                // Bought again: a failed report gets another go; a pending or ready one stays as it is.
                try await connection.query("""
                    UPDATE content.reports SET status = 'pending', failed_attempts = 0, failure = NULL, support_code = NULL,
                        next_attempt_at = \(newReport.createdAt)
                    WHERE user_id = \(newReport.user) AND chart = \(newReport.chart) AND area = \(newReport.area.rawValue) AND status = 'failed'
                    """, logger: logger)
            }
            guard let report = try await one("""
                \(unescaped: Self.select) WHERE r.user_id = \(newReport.user) AND r.chart = \(newReport.chart) AND r.area = \(newReport.area.rawValue)
                """, on: connection) else { throw StoreInconsistency("the report of a recorded purchase is missing") }
            return created ? .created(report) : .existing(report)
        }
    }

    func report(_ id: UUID, of user: UUID) async throws -> ReportRecord? {
        try await client.withConnection { try await one("\(unescaped: Self.select) WHERE r.id = \(id) AND r.user_id = \(user)", on: $0) }
    }

    func reports(of user: UUID, chart: String?) async throws -> [ReportRecord] {
        let rows = try await client.query("""
            \(unescaped: Self.select) WHERE r.user_id = \(user) AND (\(chart)::text IS NULL OR r.chart = \(chart))
            ORDER BY r.chart, r.created_at
            """, logger: logger)
        var list: [ReportRecord] = []
        for try await row in rows { list.append(try Self.decode(row)) }
        return list
    }

    func purchasedAreas(of user: UUID, chart: String) async throws -> [LifeArea: UUID] {
        let rows = try await client.query("""
            SELECT r.area, r.id FROM content.reports r
            WHERE r.user_id = \(user) AND r.chart = \(chart)
              AND EXISTS (SELECT 1 FROM content.report_purchases p WHERE p.report_id = r.id AND p.revoked_at IS NULL)
            """, logger: logger)
        var areas: [LifeArea: UUID] = [:]
        for try await (area, id) in rows.decode((String, UUID).self) { if let area = LifeArea(rawValue: area) { areas[area] = id } }
        return areas
    }

    func finish(_ id: UUID, sections: ReportSections, source: String, at date: Date) async throws {
        let json = String(decoding: try JSONEncoder().encode(sections), as: UTF8.self)
        let announced = try await client.transaction(logger: logger) { connection -> Bool in
            let rows = try await connection.query("""
                UPDATE content.reports r SET status = 'ready', sections = \(json)::jsonb, source = \(source), ready_at = \(date),
                    next_attempt_at = NULL, leased_until = NULL
                WHERE r.id = \(id) AND r.status = 'pending'
                RETURNING r.user_id, r.chart, r.area,
                          EXISTS (SELECT 1 FROM content.report_purchases p WHERE p.report_id = r.id AND p.revoked_at IS NULL)
                """, logger: logger)
            // Already ready (another writer won): a report never changes once written. Refunded while it was being
            // written: stored (a REFUND_REVERSED gives it back), but the app is not told of a report it cannot open.
            for try await (user, chart, area, _) in rows.decode((UUID, String, String, Bool).self).filter({ $0.3 }) {
                let frame = try RealtimeFrame(to: [user.uuidString.lowercased()],
                                              AstroSvitlaFrames.ReportReady(reportId: id.uuidString.lowercased(), chart: chart, area: area))
                try await outbox.enqueue(frame, subject: user.uuidString.lowercased(), at: date, on: connection, logger: logger)
                return true
            }
            return false
        }
        if announced { outbox.committed() }
    }

    func failed(_ id: UUID, reason: String, retryAt: Date?, supportCode: String, at date: Date) async throws {
        let announced = try await client.transaction(logger: logger) { connection -> Bool in
            let rows = try await connection.query("""
                UPDATE content.reports SET failed_attempts = failed_attempts + 1, leased_until = NULL, next_attempt_at = \(retryAt),
                    status = CASE WHEN \(retryAt)::timestamptz IS NULL THEN 'failed' ELSE status END,
                    failure = CASE WHEN \(retryAt)::timestamptz IS NULL THEN \(reason) END,
                    support_code = CASE WHEN \(retryAt)::timestamptz IS NULL THEN \(supportCode) END
                WHERE id = \(id) AND status = 'pending' RETURNING user_id, chart, area, status
                """, logger: logger)
            for try await (user, chart, area, status) in rows.decode((UUID, String, String, String).self) where status == "failed" {
                let frame = try RealtimeFrame(to: [user.uuidString.lowercased()],
                                              AstroSvitlaFrames.ReportFailed(reportId: id.uuidString.lowercased(), chart: chart, area: area))
                try await outbox.enqueue(frame, subject: user.uuidString.lowercased(), at: date, on: connection, logger: logger)
                return true
            }
            return false
        }
        if announced { outbox.committed() }
    }

    func leaseDue(now: Date, until: Date, limit: Int) async throws -> [ReportRecord] {
        try await client.transaction(logger: logger) { connection in
            let rows = try await connection.query("""
                UPDATE content.reports SET leased_until = \(until)
                WHERE id = ANY(ARRAY(SELECT r.id FROM content.reports r
                             WHERE r.status = 'pending' AND r.next_attempt_at <= \(now) AND (r.leased_until IS NULL OR r.leased_until <= \(now))
                               -- A refunded report is not written (no model call for it) until a REFUND_REVERSED.
                               AND EXISTS (SELECT 1 FROM content.report_purchases p WHERE p.report_id = r.id AND p.revoked_at IS NULL)
                             ORDER BY r.next_attempt_at LIMIT \(limit) FOR UPDATE OF r SKIP LOCKED))
                RETURNING id
                """, logger: logger)
            var ids: [UUID] = []
            for try await id in rows.decode(UUID.self) { ids.append(id) }
            var list: [ReportRecord] = []
            for id in ids { if let report = try await one("\(unescaped: Self.select) WHERE r.id = \(id)", on: connection) { list.append(report) } }
            return list
        }
    }

    func apply(notification uuid: String, type: String, subtype: String?, transaction: TransactionKey?, signedAt: Date,
               at date: Date) async throws -> NotificationOutcome {
        try await client.transaction(logger: logger) { connection -> NotificationOutcome in
            let fresh = try await connection.query("""
                INSERT INTO content.appstore_notifications (notification_uuid, type, subtype, received_at)
                VALUES (\(uuid), \(type), \(subtype), \(date)) ON CONFLICT DO NOTHING RETURNING 1
                """, logger: logger)
            var first = false
            for try await _ in fresh { first = true }
            guard first else { return .duplicate }
            guard let transaction else { return .acknowledged }
            let revoke: Bool
            switch type {
            case "REFUND", "REVOKE": revoke = true
            case "REFUND_REVERSED": revoke = false
            default: return .acknowledged
            }
            // Apple retries for days, so notifications arrive out of order: they apply in the order Apple signed
            // them. The condition is part of the UPDATE (a concurrent one waits for the row and is judged again
            // against what the first wrote), never a read before it. An equal signedDate applies (two signed in the
            // same millisecond: the later arrival wins, as before).
            // A revocation keeps its first date and kind; the purchase remembers this notification's signedDate
            // even when its state was already what the notification says, so an older opposite one cannot undo it.
            // The second count reads the statement's snapshot, from before the UPDATE: the purchase was skipped
            // because a newer notification had been applied (only for the outcome's name: the UPDATE decided).
            let rows = try await connection.query("""
                WITH applied AS (
                    UPDATE content.report_purchases
                    SET revoked_at = CASE WHEN \(revoke)::boolean THEN COALESCE(revoked_at, \(date)::timestamptz) END,
                        revocation = CASE WHEN \(revoke)::boolean THEN COALESCE(revocation, \(type)::text) END,
                        notification_signed_at = \(signedAt)
                    WHERE transaction_hash = \(transaction.hash) AND environment = \(transaction.environment)
                      AND (notification_signed_at IS NULL OR notification_signed_at <= \(signedAt))
                    RETURNING report_id)
                SELECT (SELECT count(*) FROM applied)::int,
                       (SELECT count(*) FROM content.report_purchases
                        WHERE transaction_hash = \(transaction.hash) AND environment = \(transaction.environment)
                          AND notification_signed_at > \(signedAt))::int
                """, logger: logger)
            var counts = (applied: 0, outdated: 0)
            for try await row in rows.decode((Int, Int).self) { counts = row }
            if counts.applied == 0 && counts.outdated > 0 { return .outdated }
            return revoke ? .revoked(reports: counts.applied) : .restored(reports: counts.applied)
        }
    }

    /// `user.deleted`: reports and purchases go; each transaction leaves a tombstone so its receipt cannot be
    /// redeemed again by a new account. A purchase in flight finished first and goes too: the erasure holds the fence
    /// (`ErasedUsers.record`), which `record` passes before anything else.
    func erase(_ user: UUID, at date: Date, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO content.redeemed_transactions (transaction_hash, environment, erased_at)
            SELECT transaction_hash, environment, \(date) FROM content.report_purchases WHERE user_id = \(user) ON CONFLICT DO NOTHING
            """, logger: logger)
        try await connection.query("DELETE FROM content.report_purchases WHERE user_id = \(user)", logger: logger)
        try await connection.query("DELETE FROM content.reports WHERE user_id = \(user)", logger: logger)
    }
}
