import Foundation
import LanternContracts

/// What a new moment tells others, written in the transaction that stores it: `moment.shared` for services, a
/// `new_moment` frame for the receiver's open sockets, and two pushes — a silent one so the widget fetches the photo
/// even when the app is closed, and a visible one. Each push collapses onto the previous moment's, as the photo
/// itself replaces the old one.
struct MomentAnnouncements: Sendable {
    let event: MediaEvents.MomentShared
    let frames: [RealtimeFrame]
    let pushes: [PushRequest]

    init(_ moment: Moment) throws {
        let receiver = moment.receiverID.lowercased, id = moment.id.lowercased
        event = MediaEvents.MomentShared(momentId: id, senderId: moment.senderID.lowercased, receiverId: receiver,
                                         senderName: moment.senderName, sentAt: moment.sentAt, width: moment.width, height: moment.height)
        frames = [try PairlyFrames.newMoment(to: receiver, momentId: id, senderName: moment.senderName, sentAt: moment.sentAt)]
        let data = ["momentId": id]
        pushes = [
            PushRequest(userId: receiver, app: .pairly, kind: "pairly.moment_shared", delivery: .background,
                        collapseKey: "pairly.moment.refresh", ttlSeconds: 24 * 3600, data: data),
            PushRequest(alert: moment.senderName == nil ? .pairlyMomentSharedUnnamed : .pairlyMomentShared, to: receiver,
                        args: moment.senderName.map { ["partnerName": $0] } ?? [:], kind: "pairly.moment_shared", collapseKey: "pairly.moment",
                        ttlSeconds: 24 * 3600, data: data),
        ]
    }
}
