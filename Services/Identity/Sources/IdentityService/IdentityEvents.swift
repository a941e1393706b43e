import Foundation

/// Payloads `identity` publishes on `lantern.events.identity` (catalogue: docs/events.md).
enum IdentityEvent {
    static let producer = "identity"

    struct UserCreated: Codable, Sendable {
        var userId: String
        var app: String
        var method: String
        /// The name known at sign-up (Google profile or Apple's first sign-in), if any.
        var displayName: String?
    }

    struct UserDeleted: Codable, Sendable {
        var userId: String
        var app: String
    }

    struct ProfileRenamed: Codable, Sendable {
        var userId: String
        var app: String
        var displayName: String
        /// The Pairly partner, who sees the new name in real time.
        var partnerId: String?
    }

    struct DeviceRegistered: Codable, Sendable {
        var userId: String
        var app: String
        var deviceId: String
        var platform: String
        var pushToken: String
        var locale: String?
        var timeZone: String?
    }

    struct DeviceRemoved: Codable, Sendable {
        var userId: String
        var app: String
        var deviceId: String
    }

    struct PairingEstablished: Codable, Sendable {
        var pairingId: String
        var app: String
        /// Both partners.
        var userIds: [String]
        /// The owner of the invite code.
        var invitedBy: String
    }

    struct PairingDissolved: Codable, Sendable {
        var pairingId: String
        var app: String
        var userIds: [String]
        var endedBy: String
        /// `disconnected` (DELETE /v1/pairing) or `account_deleted`.
        var reason: String
    }
}
