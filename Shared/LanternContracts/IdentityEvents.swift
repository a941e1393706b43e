/// What `identity` announces on `lantern.events.identity` (docs/events.md, "identity").
public enum IdentityEvents {
    public static let producer = "identity"
    public static let stream = EventStream.events(producer)

    /// A sign-in created a new account.
    public struct UserCreated: EventPayload, Equatable {
        public static let eventType = "user.created"
        public static var stream: EventStream { IdentityEvents.stream }
        public var userId: String
        public var app: AppID
        /// `device`, `google` or `apple`.
        public var method: String
        /// The name known at sign-up (Google profile or Apple's first sign-in), if any.
        public var displayName: String?

        public init(userId: String, app: AppID, method: String, displayName: String?) {
            self.userId = userId
            self.app = app
            self.method = method
            self.displayName = displayName
        }
    }

    /// The account is gone; every service erases what it keeps about the user.
    public struct UserDeleted: EventPayload, Equatable {
        public static let eventType = "user.deleted"
        public static var stream: EventStream { IdentityEvents.stream }
        public var userId: String
        public var app: AppID

        public init(userId: String, app: AppID) {
            self.userId = userId
            self.app = app
        }
    }

    public struct ProfileRenamed: EventPayload, Equatable {
        public static let eventType = "profile.renamed"
        public static var stream: EventStream { IdentityEvents.stream }
        public var userId: String
        public var app: AppID
        public var displayName: String
        /// The Pairly partner at the time of the change.
        public var partnerId: String?

        public init(userId: String, app: AppID, displayName: String, partnerId: String?) {
            self.userId = userId
            self.app = app
            self.displayName = displayName
            self.partnerId = partnerId
        }
    }

    /// The whole registration: a consumer replaces its copy of `(userId, deviceId)`.
    public struct DeviceRegistered: EventPayload, Equatable {
        public static let eventType = "device.registered"
        public static var stream: EventStream { IdentityEvents.stream }
        public var userId: String
        public var app: AppID
        public var deviceId: String
        /// `ios` or `android`.
        public var platform: String
        public var pushToken: String
        public var locale: String?
        public var timeZone: String?

        public init(userId: String, app: AppID, deviceId: String, platform: String, pushToken: String, locale: String?, timeZone: String?) {
            self.userId = userId
            self.app = app
            self.deviceId = deviceId
            self.platform = platform
            self.pushToken = pushToken
            self.locale = locale
            self.timeZone = timeZone
        }
    }

    public struct DeviceRemoved: EventPayload, Equatable {
        public static let eventType = "device.removed"
        public static var stream: EventStream { IdentityEvents.stream }
        public var userId: String
        public var app: AppID
        public var deviceId: String

        public init(userId: String, app: AppID, deviceId: String) {
            self.userId = userId
            self.app = app
            self.deviceId = deviceId
        }
    }

    public struct PairingEstablished: EventPayload, Equatable {
        public static let eventType = "pairing.established"
        public static var stream: EventStream { IdentityEvents.stream }
        public var pairingId: String
        public var app: AppID
        /// Both partners: the code's owner first, then the user who joined.
        public var userIds: [String]
        /// The owner of the invite code.
        public var invitedBy: String

        public init(pairingId: String, app: AppID, userIds: [String], invitedBy: String) {
            self.pairingId = pairingId
            self.app = app
            self.userIds = userIds
            self.invitedBy = invitedBy
        }
    }

    public struct PairingDissolved: EventPayload, Equatable {
        public static let eventType = "pairing.dissolved"
        public static var stream: EventStream { IdentityEvents.stream }
        public var pairingId: String
        public var app: AppID
        /// Both partners, sorted.
        public var userIds: [String]
        public var endedBy: String
        /// `disconnected` (DELETE /v1/pairing) or `account_deleted`.
        public var reason: String

        public init(pairingId: String, app: AppID, userIds: [String], endedBy: String, reason: String) {
            self.pairingId = pairingId
            self.app = app
            self.userIds = userIds
            self.endedBy = endedBy
            self.reason = reason
        }
    }
}
