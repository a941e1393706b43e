import Foundation
import LanternContracts

/// The push notifications of Pairly's pairing (texts: the push worker's catalogue).
enum PairlyPush {
    static func paired(recipient: UUID, partnerName: String?, pairingID: UUID) -> PushRequest {
        PushRequest(userId: recipient.lowercased, app: AppID.pairly.rawValue, kind: "pairly.paired", delivery: .alert,
                    messageKey: partnerName == nil ? "pairly.paired.unnamed" : "pairly.paired",
                    args: partnerName.map { ["partnerName": $0] }, collapseKey: "pairly.pairing", data: ["pairingId": pairingID.lowercased])
    }

    static func disconnected(recipient: UUID, partnerName: String?, pairingID: UUID) -> PushRequest {
        PushRequest(userId: recipient.lowercased, app: AppID.pairly.rawValue, kind: "pairly.partner_disconnected", delivery: .alert,
                    messageKey: partnerName == nil ? "pairly.partner_disconnected.unnamed" : "pairly.partner_disconnected",
                    args: partnerName.map { ["partnerName": $0] }, collapseKey: "pairly.pairing", data: ["pairingId": pairingID.lowercased])
    }
}
