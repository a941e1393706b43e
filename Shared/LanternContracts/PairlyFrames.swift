import Foundation
import LanternCore

/// Pairly's real-time frames (names and fields from the Pairly spec, docs/api/openapi.yaml `RealtimeFrame`).
/// Unset fields are sent as `null`, never omitted: the app reads every key (`@AlwaysEncoded`).
public enum PairlyFrames {
    /// `new_moment` to the receiver: fetch the new photo.
    public struct NewMoment: RealtimeFrameBody {
        public static let app = AppID.pairly
        public static let type = "new_moment"
        public var momentId: String
        @AlwaysEncoded public var senderName: String?
        public var sentAt: Date

        public init(momentId: String, senderName: String?, sentAt: Date) {
            self.momentId = momentId
            self.senderName = senderName
            self.sentAt = sentAt
        }
    }

    /// `partner_updated` to the partner of a user who changed their name.
    public struct PartnerUpdated: RealtimeFrameBody {
        public static let app = AppID.pairly
        public static let type = "partner_updated"
        public var partnerId: String
        public var displayName: String

        public init(partnerId: String, displayName: String) {
            self.partnerId = partnerId
            self.displayName = displayName
        }
    }

    /// `paired` to each partner, told the other's id.
    public struct Paired: RealtimeFrameBody {
        public static let app = AppID.pairly
        public static let type = "paired"
        public var pairingId: String
        @AlwaysEncoded public var partnerId: String?
        /// Always null for `paired` (the key is shared with `pair_disconnected`).
        @AlwaysEncoded public var reason: String?

        public init(pairingId: String, partnerId: String?) {
            self.pairingId = pairingId
            self.partnerId = partnerId
            self.reason = nil
        }
    }

    /// `pair_disconnected` to each partner; `reason` is `disconnected` or `account_deleted`.
    public struct PairDisconnected: RealtimeFrameBody {
        public static let app = AppID.pairly
        public static let type = "pair_disconnected"
        public var pairingId: String
        @AlwaysEncoded public var partnerId: String?
        @AlwaysEncoded public var reason: String?

        public init(pairingId: String, partnerId: String?, reason: String?) {
            self.pairingId = pairingId
            self.partnerId = partnerId
            self.reason = reason
        }
    }

    public static func newMoment(to receiver: String, momentId: String, senderName: String?, sentAt: Date) throws -> RealtimeFrame {
        try RealtimeFrame(to: [receiver], NewMoment(momentId: momentId, senderName: senderName, sentAt: sentAt))
    }

    public static func partnerUpdated(to partner: String, partnerId: String, displayName: String) throws -> RealtimeFrame {
        try RealtimeFrame(to: [partner], PartnerUpdated(partnerId: partnerId, displayName: displayName))
    }

    /// One `paired` frame per partner.
    public static func paired(pairingId: String, userIds: [String]) throws -> [RealtimeFrame] {
        try userIds.map { user in try RealtimeFrame(to: [user], Paired(pairingId: pairingId, partnerId: userIds.first { $0 != user })) }
    }

    /// One `pair_disconnected` frame per partner.
    public static func pairDisconnected(pairingId: String, userIds: [String], reason: String) throws -> [RealtimeFrame] {
        try userIds.map { user in
            try RealtimeFrame(to: [user], PairDisconnected(pairingId: pairingId, partnerId: userIds.first { $0 != user }, reason: reason))
        }
    }
}
