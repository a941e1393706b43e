import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import LanternContracts
import LanternCore
import LanternHTTP
import LanternTokens
import SocketIOProtocol
import Synchronization

/// `/socket.io/`: Socket.IO v4 over Engine.IO v4, WebSocket transport only — what the Pairly React Native app's
/// `socket.io-client` speaks with `transports: ['websocket']`.
///
/// Engine.IO packets are text frames starting with a digit: `0` open (sent first, with the heartbeat settings),
/// `2`/`3` ping/pong (the server pings, the client must answer within `pingTimeout`), `4` message, `1` close.
/// A message carries a Socket.IO packet: `0` namespace connect (the client's `auth` object holds the access
/// token), `1` disconnect, `2` event (`["name", data]`, optionally with an acknowledgement id), `3` ack,
/// `4` connect error. Only the main namespace `/` exists. Frames of the real-time hub become events with the
/// same names and payloads as on `/v1/realtime`.
struct SocketIOConnections: Sendable {
    let realtime: RealtimeConnections
    var pingInterval: Duration = .seconds(25)
    var pingTimeout: Duration = .seconds(20)
    /// Equal to the WebSocket server's frame limit (`maxFrameSize`), so what we advertise is what we accept.
    static let maxPayload = 1 << 16

    /// Whether `request` opens a Socket.IO WebSocket; anything else falls through to the router (which explains).
    static func isSocketIO(_ uri: URLComponents?) -> Bool {
        guard let uri, uri.path == "/socket.io/" || uri.path == "/socket.io" else { return false }
        let query = Dictionary((uri.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        return query["EIO"] == "4" && query["transport"] == "websocket"
    }

    func handler() -> WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context> {
        { inbound, outbound, _ in
            let lastPong = LastPong()
            let engineSID = Self.randomID()
            let open: [String: JSONValue] = ["sid": .string(engineSID), "upgrades": .array([]), "pingInterval": .number(Double(pingInterval.milliseconds)),
                                             "pingTimeout": .number(Double(pingTimeout.milliseconds)), "maxPayload": .number(Double(Self.maxPayload))]
            try await outbound.write(.text("0" + Self.json(open)))
            var session: (user: String, id: UUID, token: String, app: String?)?
            defer { if let session { realtime.hub.disconnect(user: session.user, id: session.id) } }
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Heartbeat: ping every interval; a client that stays silent past the timeout is gone.
                group.addTask {
                    while true {
                        try await Task.sleep(for: pingInterval)
                        if ContinuousClock.now - lastPong.instant > pingInterval + pingTimeout {
                            try await outbound.close(.goingAway, reason: "ping timeout")
                            return
                        }
                        try await outbound.write(.text("2"))
                    }
                }
                loop: for try await message in inbound.messages(maxSize: Self.maxPayload) {
                    guard case .text(let text) = message else { continue }
                    switch SocketIOInbound(frame: text) {
                    case .pong:
                        lastPong.record()
                    case .ping(let probe):
                        try await outbound.write(.text("3" + probe))
                    case .close:
                        break loop
                    case .connect(let namespace, let token):
                        guard session == nil else { continue }
                        guard namespace == "/" else {
                            try await outbound.write(.text("44\(namespace)," + Self.json(["message": .string("Invalid namespace")])))
                            continue
                        }
                        guard let token else {
                            try await outbound.write(.text(#"44{"message":"unauthorized: send auth: {token: <access token>}"}"#))
                            continue
                        }
                        let claims: AccessClaims, user: String
                        do {
                            (claims, user) = try await realtime.admit(token)
                        } catch {
                            // Socket.IO's CONNECT_ERROR carries a message; the problem's code and detail go in it.
                            let problem = ProblemMiddleware<LanternRequestContext>.problem(for: error, requestID: nil)
                            try await outbound.write(.text("44" + Self.json(["message": .string("\(problem.code): \(problem.detail ?? problem.title)"),
                                                                             "data": .object(["code": .string(problem.code), "status": .number(Double(problem.status))])])))
                            continue
                        }
                        let (id, frames) = realtime.hub.connect(user: user, session: claims.sid)
                        session = (user, id, token, claims.app)
                        try await outbound.write(.text("40" + Self.json(["sid": .string(Self.randomID())])))
                        try await outbound.write(.text(await realtime.state(token: token, app: claims.app).socketIOText))
                        group.addTask {
                            var reason = "session ended"
                            for await frame in frames {
                                try await outbound.write(.text(frame.socketIOText))
                                reason = frame.endedReason ?? reason
                            }
                            // The hub ended this connection (account deleted, session ended, token expired): the
                            // namespace's disconnect (the client does not reconnect by itself), then the close.
                            try await outbound.write(.text("41"))
                            try await outbound.close(.normalClosure, reason: reason)
                        }
                        group.addTask {
                            try await realtime.untilExpiry(of: claims)
                            realtime.hub.end(user: user, id: id, reason: RealtimeDisconnect.SessionEnded.tokenExpired)
                        }
                    case .event(let name, let ackID?):
                        guard let session else { continue }
                        try await answer(name, ackID: ackID, token: session.token, app: session.app, outbound: outbound)
                    case .event(_, nil), .ignored:
                        continue
                    }
                }
                group.cancelAll()
            }
        }
    }

    /// Client events: `get_state` (with an acknowledgement) returns the state; anything else with an ack id gets
    /// `{"ok": false}` so the client's callback does not hang.
    private func answer(_ name: String, ackID: UInt64, token: String, app: String?, outbound: WebSocketOutboundWriter) async throws {
        if name == "get_state" {
            let state = await realtime.state(token: token, app: app)
            try await outbound.write(.text("43\(ackID)" + (Self.encode([state.data]) ?? "[null]")))
        } else {
            try await outbound.write(.text("43\(ackID)[{\"ok\":false,\"error\":\"unknown_event\"}]"))
        }
    }

    static func json(_ object: [String: JSONValue]) -> String { encode(object) ?? "{}" }

    static func encode(_ value: some Encodable) -> String? {
        (try? JSONEncoder.lantern.encode(value)).map { String(decoding: $0, as: UTF8.self) }
    }

    static func randomID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return String((0..<20).map { _ in alphabet[Int.random(in: 0..<alphabet.count)] })
    }
}

/// When the client last answered a ping (Engine.IO `3`): the heartbeat closes a connection silent for longer than
/// the ping interval plus the ping timeout.
final class LastPong: Sendable {
    private let last = Mutex(ContinuousClock.now)
    func record() { last.withLock { $0 = .now } }
    var instant: ContinuousClock.Instant { last.withLock { $0 } }
}
