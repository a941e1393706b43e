import Foundation
import Logging
import PostgresNIO

/// Makes a consumer's database effects happen once per event id, however often the event is delivered.
///
/// The id is recorded in `processed_events` in the same transaction as the handler's writes: either both commit
/// or neither does, so a crash mid-handler leaves the event to be handled again, and a duplicate is skipped.
public struct ProcessedEvents: Sendable {
    public let schema: String
    public let consumer: String
    public init(schema: String, consumer: String) {
        self.schema = schema
        self.consumer = consumer
    }

    /// Runs `body` in a transaction unless `eventID` was already handled. Returns whether it ran.
    @discardableResult
    public func once(_ eventID: UUID, client: PostgresClient, logger: Logger,
                     _ body: (PostgresConnection) async throws -> Void) async throws -> Bool {
        try await client.transaction(logger: logger) { connection in
            let rows = try await connection.query("""
                INSERT INTO \(unescaped: schema).processed_events (consumer, event_id) VALUES (\(consumer), \(eventID))
                ON CONFLICT DO NOTHING RETURNING event_id
                """, logger: logger)
            var inserted = false
            for try await _ in rows { inserted = true }
            guard inserted else { return false }
            try await body(connection)
            return true
        }
    }

    /// Forgets ids older than `age`; by then the stream has trimmed the events, so they cannot come back.
    public func purge(olderThan age: TimeInterval, now: Date, client: PostgresClient, logger: Logger) async throws {
        let cutoff = now.addingTimeInterval(-age)
        try await client.query("DELETE FROM \(unescaped: schema).processed_events WHERE processed_at < \(cutoff)", logger: logger)
    }
}
