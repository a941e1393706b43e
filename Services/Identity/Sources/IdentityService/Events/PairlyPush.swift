import Foundation
import LanternContracts

/// The push notifications of Pairly's pairing (texts: the push worker's catalogue).
enum PairlyPush {
    static func paired(recipient: UUID, partnerName: String?, pairingID: UUID) -> PushRequest {
        PushRequest(alert: partnerName == nil ? .pairlyPairedUnnamed : .pairlyPaired, to: recipient.lowercased,
                    args: partnerName.map { ["partnerName": $0] } ?? [:], kind: "pairly.paired", collapseKey: "pairly.pairing",
                    data: ["pairingId": pairingID.lowercased])
    }

    /// The silent push of a pairing's end, to both partners (Pairly 7.5): a closed app's widget clears its cached photo
    /// now, not at its next reload. It collapses onto a new moment's silent push: the latest word to the widget wins.
    static func pairingEnded(recipient: UUID, pairingID: UUID, reason: String) -> PushRequest {
        PushRequest(userId: recipient.lowercased, app: .pairly, kind: "pairly.pairing_ended", delivery: .background,
                    collapseKey: "pairly.moment.refresh", ttlSeconds: 24 * 3600, data: ["pairingId": pairingID.lowercased, "reason": reason])
    }

    static func disconnected(recipient: UUID, partnerName: String?, pairingID: UUID) -> PushRequest {
        PushRequest(alert: partnerName == nil ? .pairlyPartnerDisconnectedUnnamed : .pairlyPartnerDisconnected, to: recipient.lowercased,
                    args: partnerName.map { ["partnerName": $0] } ?? [:], kind: "pairly.partner_disconnected", collapseKey: "pairly.pairing",
                    data: ["pairingId": pairingID.lowercased])
    }
}
