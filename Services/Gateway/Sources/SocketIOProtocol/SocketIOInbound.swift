import Foundation
import LanternCore

/// What one text frame from a Socket.IO v5 client (over Engine.IO v4) asks of the server: the parse of attacker
/// bytes, kept apart from the connection that acts on it so that it can be fuzzed alone (`make fuzz`).
///
/// Engine.IO packets start with a digit: `1` close, `2` ping (a probe the server echoes as `3`), `3` pong,
/// `4` message. A message carries a Socket.IO packet: `0` connect to a namespace (`40/ns,{"token":…}` — the
/// client's `auth` object), `1` disconnect, `2` event (`42[ack id]["name", …]`). Everything else — binary
/// packets, acknowledgements of our events, unknown types — is ignored, as the reference server ignores what it
/// does not expect.
public enum SocketIOInbound: Equatable, Sendable {
    /// Engine.IO `3`: the client answers our ping.
    case pong
    /// Engine.IO `2<data>`: the client's ping, answered with `3<data>`.
    case ping(String)
    /// Engine.IO `1` or Socket.IO `41`: the client leaves.
    case close
    /// Socket.IO `40`: connect to `namespace` (always starting with `/`) with the `token` field of `auth`, if any.
    case connect(namespace: String, token: String?)
    /// Socket.IO `42`: an event by `name`, with the acknowledgement id the client waits on, if any.
    case event(name: String, ackID: UInt64?)
    case ignored

    /// Acknowledgement ids are integers (socket.io-parser reads them with `Number`); more digits than a
    /// JavaScript number holds exactly is not an id a client sends.
    public static let maxAckDigits = 15

    public init(frame text: String) {
        var rest = Substring(text)
        guard let engine = rest.popFirst() else { self = .ignored; return }
        switch engine {
        case "1": self = .close
        case "2": self = .ping(String(rest))
        case "3": self = .pong
        case "4": self = Self.message(rest)
        default: self = .ignored
        }
    }

    private static func message(_ packet: Substring) -> SocketIOInbound {
        var rest = packet
        switch rest.popFirst() {
        case "0":
            let (namespace, payload) = splitNamespace(rest)
            let auth = try? JSONDecoder.lantern.decode(JSONValue.self, from: Data(payload.utf8))
            return .connect(namespace: namespace, token: auth?["token"]?.stringValue)
        case "1":
            return .close
        case "2":
            let digits = rest.utf8.prefix(while: { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            guard digits.count <= maxAckDigits else { return .ignored }
            let ackID = digits.isEmpty ? nil : UInt64(Substring(digits))
            let body = rest.utf8.dropFirst(digits.count)
            guard let array = try? JSONDecoder.lantern.decode([JSONValue].self, from: Data(body)),
                  case .string(let name)? = array.first else { return .ignored }
            return .event(name: name, ackID: ackID)
        default:
            return .ignored
        }
    }

    /// `"/admin,{…}"` → ("/admin", "{…}"); no leading slash means the main namespace.
    public static func splitNamespace(_ packet: Substring) -> (namespace: String, payload: Substring) {
        guard packet.first == "/" else { return ("/", packet) }
        guard let comma = packet.firstIndex(of: ",") else { return (String(packet), "") }
        return (String(packet[..<comma]), packet[packet.index(after: comma)...])
    }
}
