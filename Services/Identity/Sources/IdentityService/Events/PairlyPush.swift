import Foundation
import LanternContracts

/// The push notifications of Pairly's pairing (texts: the push worker's catalogue).
enum PairlyPush {
    static func paired(recipient: UUID, partnerName: String?, pairingID: UUID) -> PushRequest {
        PushRequest(alert: partnerName == nil ? .pairlyPairedUnnamed : .pairlyPaired, to: recipient.lowercased,
                    args: partnerName.map { ["partnerName": $0] } ?? [:], kind: "pairly.paired", collapseKey: "pairly.pairing",
                    data: ["pairingId": pairingID.lowercased])
    }

    static func disconnected(recipient: UUID, partnerName: String?, pairingID: UUID) -> PushRequest {
        PushRequest(alert: partnerName == nil ? .pairlyPartnerDisconnectedUnnamed : .pairlyPartnerDisconnected, to: recipient.lowercased,
                    args: partnerName.map { ["partnerName": $0] } ?? [:], kind: "pairly.partner_disconnected", collapseKey: "pairly.pairing",
                    data: ["pairingId": pairingID.lowercased])
    }
}
