import Foundation

/// A request for a push notification: the `data` of a `push.requested` job on `lantern.jobs.push`.
///
/// Producers name *what* to say (a catalogue key and its arguments), never the text: the push worker renders it
/// in each device's language. Catalogue and wire formats: docs/events.md, `Services/PushWorker`.
public struct PushRequest: EventPayload, Equatable {
    public static let eventType = "push.requested"
    public static var stream: EventStream { .jobs("push") }

    public enum Delivery: String, Codable, Sendable {
        /// A visible notification (title and body from the catalogue).
        case alert
        /// A silent push that wakes the app or its widget (`content-available` / FCM data message).
        case background
    }

    /// The recipient; every device registered for this account gets the notification.
    public var userId: String
    /// The recipient's app (decides the APNs topic).
    public var app: AppID
    /// What happened, e.g. `pairly.moment_shared`; sent to the app as `kind` and used in metrics.
    public var kind: String
    public var delivery: Delivery
    /// Catalogue key of the title and body; required for `alert`.
    public var messageKey: String?
    /// Values for the `{placeholders}` of the message.
    public var args: [String: String]?
    /// Notifications with the same key replace each other on the device (`apns-collapse-id`, FCM `collapse_key`).
    public var collapseKey: String?
    /// How long a provider may keep trying to reach an offline device; default 1 day.
    public var ttlSeconds: Int?
    /// Extra key/value pairs for the app (ids to fetch, never personal data).
    public var data: [String: String]?

    public init(userId: String, app: AppID, kind: String, delivery: Delivery, messageKey: String? = nil,
                args: [String: String]? = nil, collapseKey: String? = nil, ttlSeconds: Int? = nil, data: [String: String]? = nil) {
        self.userId = userId
        self.app = app
        self.kind = kind
        self.delivery = delivery
        self.messageKey = messageKey
        self.args = args
        self.collapseKey = collapseKey
        self.ttlSeconds = ttlSeconds
        self.data = data
    }

    /// The job envelope; `subject` is the recipient.
    public func envelope(producer: String, at date: Date) throws -> EventEnvelope {
        try EventEnvelope(self, producer: producer, subject: userId, occurredAt: date)
    }
}
