import Crypto
import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import LanternTokens
import Logging
import PostgresNIO

/// Push registrations of an account's devices; each change is announced (`device.registered`, `device.removed`).
struct DeviceStore: IdentityTables {
    let db: IdentityDatabase

    /// Registers or updates a device's push token. A push token moves with the phone: if another account of the
    /// same app held it (sign-out, new account), that registration is removed so pushes reach the right person.
    func upsertDevice(userID: UUID, app: AppID, device: Device) async throws -> (Device, created: Bool) {
        let now = clock.now()
        let created: Bool
        do {
            created = try await register(userID: userID, app: app, device: device, now: now)
        } catch let error where DatabaseErrors.foreignKeyViolation(error) != nil {
            throw AccountErased()  // the account was deleted since its token was checked; the cascade took the rest
        }
        outbox.committed()
        var stored = device
        stored.app = app.rawValue
        stored.updatedAt = now
        return (stored, created)
    }

    func removeDevice(userID: UUID, deviceID: String) async throws -> Bool {
        let now = clock.now()
        let removed: Bool = try await client.transaction(logger: logger) { connection in
            let rows = try await connection.query("""
                DELETE FROM identity.devices WHERE user_id = \(userID) AND device_id = \(deviceID) RETURNING app
                """, logger: logger)
            var app: AppID?
            for try await a in rows.decode(AppID.self) { app = a }
            guard let app else { return false }
            try await outbox.enqueue(IdentityEvents.DeviceRemoved(userId: userID.lowercased, app: app, deviceId: deviceID),
                                     subject: userID.lowercased, at: now, on: connection, logger: logger)
            return true
        }
        if removed { outbox.committed() }
        return removed
    }

    private func register(userID: UUID, app: AppID, device: Device, now: Date) async throws -> Bool {
        try await client.transaction(logger: logger) { connection in
            let stale = try await connection.query("""
                DELETE FROM identity.devices WHERE app = \(app.rawValue) AND push_token = \(device.pushToken)
                AND NOT (user_id = \(userID) AND device_id = \(device.deviceId)) RETURNING user_id, device_id
                """, logger: logger)
            var removed: [(UUID, String)] = []
            for try await row in stale.decode((UUID, String).self) { removed.append(row) }
            for (otherUser, otherDevice) in removed {
                try await outbox.enqueue(IdentityEvents.DeviceRemoved(userId: otherUser.lowercased, app: app, deviceId: otherDevice),
                                         subject: otherUser.lowercased, at: now, on: connection, logger: logger)
            }
            let rows = try await connection.query("""
                INSERT INTO identity.devices (user_id, device_id, app, platform, push_token, locale, time_zone, updated_at)
                VALUES (\(userID), \(device.deviceId), \(app.rawValue), \(device.platform), \(device.pushToken), \(device.locale), \(device.timeZone), \(now))
                ON CONFLICT (user_id, device_id) DO UPDATE SET platform = excluded.platform, push_token = excluded.push_token,
                    locale = excluded.locale, time_zone = excluded.time_zone, updated_at = excluded.updated_at
                RETURNING (xmax = 0)
                """, logger: logger)
            var inserted = false
            for try await flag in rows.decode(Bool.self) { inserted = flag }
            try await outbox.enqueue(IdentityEvents.DeviceRegistered(userId: userID.lowercased, app: app, deviceId: device.deviceId,
                                                                     platform: device.platform, pushToken: device.pushToken,
                                                                     locale: device.locale, timeZone: device.timeZone),
                                     subject: userID.lowercased, at: now, on: connection, logger: logger)
            return inserted
        }
    }
}
