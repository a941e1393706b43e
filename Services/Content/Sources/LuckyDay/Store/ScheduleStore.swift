import ContentKit
import Foundation
import LanternCore
import LanternContracts
import LanternEvents
import Logging
import PostgresNIO

/// The durable schedules: whose next fortune to make (`content.pregeneration`) and whose "cookie ready"
/// reminder is due (`content.reminders`). Rows are claimed with `FOR UPDATE SKIP LOCKED`, so replicas share the
/// work and each row is handled once.
struct ScheduleStore: Sendable {
    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger

    func requestPregeneration(for user: UUID, at due: Date, on connection: PostgresConnection) async throws {
        try await connection.query("""
            INSERT INTO content.pregeneration (user_id, due_at) VALUES (\(user), \(due))
            ON CONFLICT (user_id) DO UPDATE SET due_at = excluded.due_at, leased_until = NULL
            """, logger: logger)
    }

    /// Leases up to `limit` due pre-generations until `leaseUntil`; returns their users and the lease they hold.
    func leasePregenerations(now: Date, leaseUntil: Date, limit: Int) async throws -> [UUID] {
        let rows = try await client.query("""
            UPDATE content.pregeneration SET leased_until = \(leaseUntil)
            WHERE user_id = ANY(ARRAY(SELECT user_id FROM content.pregeneration
                                      WHERE due_at <= \(now) AND (leased_until IS NULL OR leased_until < \(now))
                                      ORDER BY due_at LIMIT \(limit) FOR UPDATE SKIP LOCKED))
            RETURNING user_id
            """, logger: logger)
        var users: [UUID] = []
        for try await user in rows.decode(UUID.self) { users.append(user) }
        return users
    }

    /// Stores a fortune made ahead and ends the lease, unless the request was renewed meanwhile (the profile was
    /// edited: its lease was cleared, and the fortune is for the old profile).
    func finishPregeneration(_ fortune: WrittenFortune, for user: UUID, profileVersion: Int, day: LocalDay, lease: Date, at now: Date) async throws {
        try await client.transaction(logger: logger) { connection in
            // The profile row first, as every transaction on a user's rows takes it (see ProfileStore.erase).
            var current: Int?
            for try await version in try await connection.query("""
                SELECT version FROM content.luckyday_profiles WHERE user_id = \(user) FOR SHARE
                """, logger: logger).decode(Int.self) { current = version }
            var held = false
            for try await _ in try await connection.query("""
                DELETE FROM content.pregeneration WHERE user_id = \(user) AND leased_until = \(lease) RETURNING user_id
                """, logger: logger) { held = true }
            guard held, current == profileVersion else { return }
            try await connection.query("""
                INSERT INTO content.next_fortunes (user_id, text, artisanal, source, pool_position, profile_version, for_date, generated_at)
                VALUES (\(user), \(fortune.text), \(fortune.artisanal), \(fortune.source), \(fortune.poolPosition), \(profileVersion),
                        \(day.description)::date, \(now))
                ON CONFLICT (user_id) DO UPDATE SET text = excluded.text, artisanal = excluded.artisanal, source = excluded.source,
                    pool_position = excluded.pool_position, profile_version = excluded.profile_version, for_date = excluded.for_date,
                    generated_at = excluded.generated_at
                """, logger: logger)
        }
    }

    /// Drops a pre-generation request whose user has no profile any more.
    func cancelPregeneration(for user: UUID) async throws {
        try await client.query("DELETE FROM content.pregeneration WHERE user_id = \(user)", logger: logger)
    }

    /// Sends the reminders due at `now`: each one's push job is written to the outbox and its row deleted in one
    /// transaction, so a reminder is sent once however many replicas run this. Returns how many were sent.
    func sendDueReminders(now: Date, limit: Int) async throws -> Int {
        let sent = try await client.transaction(logger: logger) { connection -> Int in
            let rows = try await connection.query("""
                DELETE FROM content.reminders WHERE user_id = ANY(ARRAY(
                    SELECT user_id FROM content.reminders WHERE due_at <= \(now) ORDER BY due_at LIMIT \(limit) FOR UPDATE SKIP LOCKED))
                RETURNING user_id
                """, logger: logger)
            var users: [UUID] = []
            for try await user in rows.decode(UUID.self) { users.append(user) }
            try await outbox.enqueue(users.map(CookieAnnouncements.reminder), at: now, on: connection, logger: logger)
            return users.count
        }
        if sent > 0 { outbox.committed() }
        return sent
    }
}
