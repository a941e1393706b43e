import Foundation
import LanternContracts
import LanternCore

/// A frame on its way to sockets, encoded for each protocol from the typed value.
struct OutboundFrame: Sendable, Equatable {
    var type: String
    var data: JSONValue

    /// `/v1/realtime`: `{"data": …, "type": …}` (keys sorted).
    var webSocketText: String {
        struct Frame: Encodable { var type: String; var data: JSONValue }
        return Self.encode(Frame(type: type, data: data)) ?? #"{"data":null,"type":"error"}"#
    }

    /// Socket.IO: an event packet, `42["<type>", data]`.
    var socketIOText: String {
        "42" + (Self.encode([JSONValue.string(type), data]) ?? #"["error",null]"#)
    }

    /// The last frame of a socket the server ends, with why (`RealtimeDisconnect.SessionEnded`).
    static func sessionEnded(reason: String) -> OutboundFrame {
        OutboundFrame(type: RealtimeDisconnect.SessionEnded.frameType, data: .object(["reason": .string(reason)]))
    }

    /// The reason of a `session_ended` frame, nil for any other.
    var endedReason: String? {
        guard type == RealtimeDisconnect.SessionEnded.frameType, case .string(let reason)? = data["reason"] else { return nil }
        return reason
    }

    private static func encode(_ value: some Encodable) -> String? {
        (try? JSONEncoder.lantern.encode(value)).map { String(decoding: $0, as: UTF8.self) }
    }
}
