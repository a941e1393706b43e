import Crypto
import Foundation
import LanternContracts
import LanternCore

/// A Lantern account as the apps see it (`GET /v1/me`).
public struct User: Codable, Sendable, Equatable {
    /// Lower-case UUID, as in tokens and events.
    public var id: String
    public var app: String
    public var displayName: String?
    public var email: String?
    public var timeZone: String?
    public var locale: String?
    public var signInMethods: [String]
    public var createdAt: Date
    public var updatedAt: Date
}

/// `GET /v1/me` answers every request of the floor with this: written directly (`JSONWritingTests`).
extension User: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) {
        writer.object { json in
            json.member("app", app)
            json.member("createdAt", createdAt)
            json.member("displayName", displayName)
            json.member("email", email)
            json.member("id", id)
            json.member("locale", locale)
            json.member("signInMethods", signInMethods)
            json.member("timeZone", timeZone)
            json.member("updatedAt", updatedAt)
        }
    }
}

public struct Device: Codable, Sendable, Equatable {
    public var deviceId: String
    public var app: String
    public var platform: String
    public var pushToken: String
    public var locale: String?
    public var timeZone: String?
    public var updatedAt: Date
}

/// What the profile update changes; nil leaves a field as it is.
struct ProfileChanges: Sendable {
    var displayName: String?
    var timeZone: String?
    var locale: String?
}

/// The outcome of presenting a refresh token.
enum RefreshOutcome: Sendable {
    case rotated(userID: UUID, sessionID: UUID, app: AppID, refreshToken: String)
    case unknown
    case expired
    case revoked
    /// A spent token came back: someone holds a copy. The session has been revoked.
    case reused
}
