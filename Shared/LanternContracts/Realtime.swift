import Foundation
import LanternCore

/// Something a service wants on users' open sockets: written through the producer's outbox, in the transaction
/// of the change it announces, onto `lantern.realtime`, and carried by every gateway to the sockets of
/// `recipients` it holds.
///
/// Apps receive `{"data": …, "type": …}` on `/v1/realtime` and `42["<type>", data]` on Socket.IO. The gateway does
/// not interpret `type` or `data`: what a frame means is the producing app's contract (e.g. `PairlyFrames`).
public struct RealtimeFrame: EventPayload, Equatable {
    public static let eventType = "realtime.frame"
    public static var stream: EventStream { .realtime }

    /// User ids (lower-case UUIDs) whose sockets get the frame.
    public var recipients: [String]
    /// The recipients' app (an account belongs to one app; kept for logs and metrics).
    public var app: AppID
    /// The frame's name, e.g. `new_moment`.
    public var type: String
    public var data: JSONValue

    public init(to recipients: [String], app: AppID, type: String, data: JSONValue) {
        self.recipients = recipients
        self.app = app
        self.type = type
        self.data = data
    }
}

/// A frame's `data` as a type of its app's contract: its app and name go with it, so a producer cannot pair a body
/// with another frame's name, and a reader decodes what the producer encoded.
public protocol RealtimeFrameBody: Codable, Sendable, Equatable {
    static var app: AppID { get }
    /// The frame's name on the socket, e.g. `new_moment`.
    static var type: String { get }
}

extension RealtimeFrame {
    /// The frame of `body` for `recipients`.
    public init<Body: RealtimeFrameBody>(to recipients: [String], _ body: Body) throws {
        self.init(to: recipients, app: Body.app, type: Body.type, data: try JSONValue(encoding: body))
    }

    /// `data` as `Body` when this is a frame of that type (nil when it is another).
    public func body<Body: RealtimeFrameBody>(as _: Body.Type) throws -> Body? {
        guard app == Body.app, type == Body.type else { return nil }
        return try data.decode(as: Body.self)
    }
}

/// Ends open sockets: every one of `userIds` (the account was deleted), and those opened with a token of one of
/// `sessionIds` (the session was logged out or revoked): a socket must not outlive what its token stood for.
/// Each socket gets the `session_ended` frame (`SessionEnded`) with `reason` before it closes.
public struct RealtimeDisconnect: EventPayload, Equatable {
    public static let eventType = "realtime.disconnect"
    public static var stream: EventStream { .realtime }

    public var userIds: [String]
    /// Sessions (`sid` of the access token, lower-case UUIDs) whose sockets end. Absent in events written before it
    /// existed, which read as none.
    public var sessionIds: [String]
    /// Why, for logs and the `session_ended` frame, e.g. `account_deleted`, `logged_out`.
    public var reason: String

    public init(userIds: [String] = [], sessionIds: [String] = [], reason: String) {
        self.userIds = userIds
        self.sessionIds = sessionIds
        self.reason = reason
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        userIds = try container.decodeIfPresent([String].self, forKey: .userIds) ?? []
        sessionIds = try container.decodeIfPresent([String].self, forKey: .sessionIds) ?? []
        reason = try container.decode(String.self, forKey: .reason)
    }

    /// The last frame of a socket that the server ends: `{"type":"session_ended","data":{"reason":…}}` on
    /// `/v1/realtime`, `42["session_ended",{"reason":…}]` then a namespace disconnect on Socket.IO. `reason` is
    /// `account_deleted`, `logged_out`, `refresh_token_reused` or `token_expired`; the app refreshes its token (or
    /// signs in again) and reconnects.
    public enum SessionEnded {
        public static let frameType = "session_ended"
        public static let tokenExpired = "token_expired"
    }
}

/// The first frame of every socket, `{"data": {…}, "type": "state"}`, so an app that was offline catches up
/// before live frames follow (also Socket.IO's `get_state`).
///
/// The gateway asks the services its route table names for the user's app, each at `path` with the user's own
/// access token, and takes the keys it was told each one owns; a key whose service does not answer is `null`.
/// A service answers a JSON object with its keys for the caller's app (`{}` for other apps).
public enum RealtimeState {
    public static let path = "/internal/realtime/state"
    public static let frameType = "state"

    /// A key of the state frame and the service that owns it.
    public struct Key: Sendable, Hashable {
        public let name: String
        public let service: String
        public init(_ name: String, service: String) {
            self.name = name
            self.service = service
        }
    }

    /// Pairly: the partnership (identity).
    public static let pairlyPairing = Key("pairing", service: "identity")
    /// Pairly: the widget's moment (media).
    public static let pairlyMoment = Key("moment", service: "media")

    /// The keys of each app's state frame, in order.
    public static let keys: [AppID: [Key]] = [.pairly: [pairlyPairing, pairlyMoment]]
}
