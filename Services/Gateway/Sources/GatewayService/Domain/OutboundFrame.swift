import Foundation
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

    private static func encode(_ value: some Encodable) -> String? {
        (try? JSONEncoder.lantern.encode(value)).map { String(decoding: $0, as: UTF8.self) }
    }
}
