import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import Logging
import PostgresNIO

/// The worker's own copy of push registrations (schema `push`), kept from identity's events.
///
/// Every write is conditional on the event's `occurredAt`, so handling is idempotent and order-tolerant without
/// a processed-events table: a redelivered or late event never overwrites a newer registration, and a
/// `device.registered` arriving after its account's `user.deleted` is ignored.
public struct DeviceRegistry: Sendable {
    public static let schema = "push"
    let client: PostgresClient
    let logger: Logger

    static let housekeeping: [Housekeeping.Rule] = [
        .init("deleted_users", sql: "DELETE FROM push.deleted_users WHERE deleted_at < $1", keep: 30 * 86_400),
    ]

    func registered(_ device: IdentityEvents.DeviceRegistered, at: Date, eventID: UUID) async throws {
        let user = try UndecodablePayload.uuid(device.userId, field: "userId")
        guard Device.Platform(rawValue: device.platform) != nil else {
            logger.warning("registration with unknown platform ignored", metadata: ["eventId": "\(eventID)", "platform": "\(device.platform)"])
            return
        }
        try await client.query("""
            INSERT INTO push.devices (user_id, device_id, app, platform, push_token, locale, time_zone, registered_at)
            SELECT \(user), \(device.deviceId), \(device.app.rawValue), \(device.platform), \(device.pushToken), \(device.locale), \(device.timeZone), \(at)
            WHERE NOT EXISTS (SELECT 1 FROM push.deleted_users WHERE user_id = \(user))
            ON CONFLICT (user_id, device_id) DO UPDATE SET app = excluded.app, platform = excluded.platform,
                push_token = excluded.push_token, locale = excluded.locale, time_zone = excluded.time_zone, registered_at = excluded.registered_at
            WHERE push.devices.registered_at <= excluded.registered_at
            """, logger: logger)
    }

    func removed(_ removed: IdentityEvents.DeviceRemoved, at: Date) async throws {
        let user = try UndecodablePayload.uuid(removed.userId, field: "userId")
        try await client.query("""
            DELETE FROM push.devices WHERE user_id = \(user) AND device_id = \(removed.deviceId) AND registered_at <= \(at)
            """, logger: logger)
    }

    func userDeleted(_ deleted: IdentityEvents.UserDeleted, at: Date) async throws {
        let user = try UndecodablePayload.uuid(deleted.userId, field: "userId")
        try await client.transaction(logger: logger) { connection in
            try await connection.query("DELETE FROM push.devices WHERE user_id = \(user)", logger: logger)
            try await connection.query("""
                INSERT INTO push.deleted_users (user_id, deleted_at) VALUES (\(user), \(at)) ON CONFLICT (user_id) DO NOTHING
                """, logger: logger)
        }
    }

    /// Every registration of the account in `app`.
    public func devices(of userID: UUID, app: AppID) async throws -> [Device] {
        try await select(client.query("""
            SELECT user_id, device_id, app, platform, push_token, locale FROM push.devices WHERE user_id = \(userID) AND app = \(app.rawValue)
            """, logger: logger))
    }

    /// Every registration of each of `users`, in one query (a batch of jobs).
    public func devices(of users: [UUID]) async throws -> [UUID: [Device]] {
        guard !users.isEmpty else { return [:] }
        let found = try await select(client.query("""
            SELECT user_id, device_id, app, platform, push_token, locale FROM push.devices WHERE user_id = ANY(\(users))
            """, logger: logger))
        return Dictionary(grouping: found, by: \.userID)
    }

    public func device(of userID: UUID, id deviceID: String) async throws -> Device? {
        try await select(client.query("""
            SELECT user_id, device_id, app, platform, push_token, locale FROM push.devices WHERE user_id = \(userID) AND device_id = \(deviceID)
            """, logger: logger)).first
    }

    /// Forgets a registration the provider called dead, unless it was re-registered with another token meanwhile.
    @discardableResult
    public func remove(_ device: Device) async throws -> Bool {
        let rows = try await client.query("""
            DELETE FROM push.devices WHERE user_id = \(device.userID) AND device_id = \(device.deviceID) AND push_token = \(device.pushToken)
            RETURNING device_id
            """, logger: logger)
        for try await _ in rows { return true }
        return false
    }

    private func select(_ rows: PostgresRowSequence) async throws -> [Device] {
        var devices: [Device] = []
        for try await (user, id, app, platform, token, locale) in rows.decode((UUID, String, String, String, String, String?).self) {
            // A row of an app or platform this build does not know (written by a newer one) is not this build's to send.
            guard let platform = Device.Platform(rawValue: platform), let app = AppID(rawValue: app) else { continue }
            devices.append(Device(userID: user, deviceID: id, app: app, platform: platform, pushToken: token, locale: locale))
        }
        return devices
    }
}
