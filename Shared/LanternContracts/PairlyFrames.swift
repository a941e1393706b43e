import Foundation
import LanternCore

/// Pairly's real-time frames (names and fields from the Pairly spec, docs/api/openapi.yaml `RealtimeFrame`).
/// Unset fields are sent as `null`, never omitted: the app reads every key.
public enum PairlyFrames {
    /// `new_moment` to the receiver: fetch the new photo.
    public static func newMoment(to receiver: String, momentId: String, senderName: String?, sentAt: Date) -> RealtimeFrame {
        RealtimeFrame(to: [receiver], app: .pairly, type: "new_moment", data: .object([
            "momentId": .string(momentId), "senderName": senderName.map(JSONValue.string) ?? .null, "sentAt": .string(RFC3339.string(from: sentAt)),
        ]))
    }

    /// `partner_updated` to the partner of a user who changed their name.
    public static func partnerUpdated(to partner: String, partnerId: String, displayName: String) -> RealtimeFrame {
        RealtimeFrame(to: [partner], app: .pairly, type: "partner_updated", data: .object([
            "partnerId": .string(partnerId), "displayName": .string(displayName),
        ]))
    }

    /// `paired` to both partners, each told the other's id.
    public static func paired(pairingId: String, userIds: [String]) -> [RealtimeFrame] {
        pairing("paired", pairingId: pairingId, userIds: userIds, reason: nil)
    }

    /// `pair_disconnected` to both partners; `reason` is `disconnected` or `account_deleted`.
    public static func pairDisconnected(pairingId: String, userIds: [String], reason: String) -> [RealtimeFrame] {
        pairing("pair_disconnected", pairingId: pairingId, userIds: userIds, reason: reason)
    }

    private static func pairing(_ type: String, pairingId: String, userIds: [String], reason: String?) -> [RealtimeFrame] {
        userIds.map { user in
            let partner = userIds.first { $0 != user }
            return RealtimeFrame(to: [user], app: .pairly, type: type, data: .object([
                "pairingId": .string(pairingId), "partnerId": partner.map(JSONValue.string) ?? .null,
                "reason": reason.map(JSONValue.string) ?? .null,
            ]))
        }
    }
}
