import Foundation
import LanternCore
import Logging
import PostgresNIO

/// Deletes rows whose purpose has passed (spent tokens, old idempotency keys, processed event ids).
///
/// Each statement is a plain `DELETE … WHERE <age> < $cutoff`; running it on several instances at once is
/// harmless. `ServiceBuilder.addHousekeeping` runs `runOnce` hourly as periodic work, the first time one interval
/// after start so start-up stays quick.
public struct Housekeeping: Sendable {
    public struct Rule: Sendable {
        public var name: String
        /// SQL with one bind, `$1`, the cutoff time.
        public var sql: String
        public var keep: TimeInterval

        public init(_ name: String, sql: String, keep: TimeInterval) {
            self.name = name
            self.sql = sql
            self.keep = keep
        }
    }

    let client: PostgresClient
    let rules: [Rule]
    let clock: WallClock
    let logger: Logger

    public init(client: PostgresClient, rules: [Rule], clock: WallClock, logger: Logger) {
        self.client = client
        self.rules = rules
        self.clock = clock
        self.logger = logger
    }

    /// Applies every rule once; returns rows deleted per rule.
    @discardableResult
    public func runOnce() async -> [String: Int] {
        var deleted: [String: Int] = [:]
        for rule in rules {
            let cutoff = clock.now().addingTimeInterval(-rule.keep)
            var bindings = PostgresBindings()
            bindings.append(cutoff)
            do {
                deleted[rule.name] = try await client.rowsAffected(PostgresQuery(unsafeSQL: rule.sql, binds: bindings), logger: logger)
            } catch {
                logger.warning("housekeeping failed", metadata: ["rule": "\(rule.name)", "error": "\(error)"])
            }
        }
        if deleted.values.contains(where: { $0 > 0 }) { logger.info("housekeeping", metadata: ["deleted": "\(deleted)"]) }
        return deleted
    }
}

extension Housekeeping.Rule {
    /// Processed event ids outlive the streams' retention by far after a week.
    public static func processedEvents(schema: String) -> Self {
        .init("processed_events", sql: "DELETE FROM \(schema).processed_events WHERE processed_at < $1", keep: 7 * 86_400)
    }
}
