import Foundation
import LanternCore
import SocketIOProtocol

/// The Socket.IO frame parser (the input is a WebSocket text frame, so valid UTF-8): whatever the text, one
/// answer, the same each time; a namespace starting with `/`; and what our own encoding of an event or a
/// connect says is read back unchanged (the parser and a client agree on the format).
enum SocketIOChecks {
    static func check(_ bytes: [UInt8]) throws(FuzzFinding) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else { return "not UTF-8" }  // not a text frame
        let packet = SocketIOInbound(frame: text)
        try expect(SocketIOInbound(frame: text) == packet, "socketio: two parses of one frame differ")
        switch packet {
        case .connect(let namespace, let token):
            try expect(namespace.hasPrefix("/"), "socketio: namespace \(namespace.debugDescription) without /")
            if let token {
                let frame = "40" + encode(["token": JSONValue.string(token)])
                try expect(SocketIOInbound(frame: frame) == .connect(namespace: "/", token: token), "socketio: \(frame.debugDescription) does not read back")
            }
        case .event(let name, let ackID):
            let frame = "42" + (ackID.map(String.init) ?? "") + encode([JSONValue.string(name)])
            try expect(SocketIOInbound(frame: frame) == packet, "socketio: \(frame.debugDescription) does not read back as \(packet)")
        case .pong, .ping, .close, .ignored:
            break
        }
        return "\(packet)"
    }

    static func encode(_ value: some Encodable) -> String {
        String(decoding: (try? JSONEncoder.lantern.encode(value)) ?? Data(), as: UTF8.self)
    }
}
