import Foundation
@testable import GatewayService
import LanternContracts
import LanternCore
import Testing

@Suite("Real-time frame encoding")
struct FrameEncodingTests {
    static let sentAt = RFC3339.date(from: "2026-11-22T10:00:00.000Z")!

    @Test("a frame reaches /v1/realtime as the same bytes the Pairly app has always read")
    func webSocketBytes() throws {
        let frame = try PairlyFrames.newMoment(to: "u", momentId: "m-1", senderName: "Ana", sentAt: Self.sentAt)
        #expect(OutboundFrame(type: frame.type, data: frame.data).webSocketText
                == #"{"data":{"momentId":"m-1","senderName":"Ana","sentAt":"2026-11-22T10:00:00.000Z"},"type":"new_moment"}"#)
        let paired = try PairlyFrames.paired(pairingId: "p-1", userIds: ["a", "b"])[0]
        #expect(OutboundFrame(type: paired.type, data: paired.data).webSocketText
                == #"{"data":{"pairingId":"p-1","partnerId":"b","reason":null},"type":"paired"}"#)
    }

    @Test("the same frame on Socket.IO is an event packet, encoded from the typed value")
    func socketIOBytes() throws {
        let frame = try PairlyFrames.partnerUpdated(to: "u", partnerId: "p", displayName: "Ana / B")
        #expect(OutboundFrame(type: frame.type, data: frame.data).socketIOText == #"42["partner_updated",{"displayName":"Ana / B","partnerId":"p"}]"#)
    }
}
