import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import LanternCore
import LanternTokens
import NIOCore

/// `GET /v1/realtime` as a WebSocket: JSON frames `{"type": …, "data": {…}}` for the signed-in user.
///
/// The token comes in `Authorization: Bearer …` or, for clients that cannot set headers on a WebSocket, the
/// `access_token` query parameter. The first frame is always `state` (current pairing and latest moment), so an
/// app that was offline catches up before live frames follow. Requests that cannot upgrade fall through to the
/// router, which answers 401 or 426.
struct RealtimeConnections: Sendable {
    let hub: RealtimeHub
    let verifier: AccessTokenVerifier
    let client: HTTPClient
    let upstreams: [String: URL]

    func shouldUpgrade(_ request: HTTPRequest) async throws -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        let uri = URLComponents(string: request.path ?? "")
        guard uri?.path == "/v1/realtime", let token = Self.token(request, uri: uri),
              let claims = try? await verifier.verify(token), let user = claims.userID?.lowercased
        else { return .dontUpgrade }
        return .upgrade([:]) { inbound, outbound, _ in
            // Register before reading the state, so nothing that happens in between is missed.
            let (id, frames) = hub.connect(user: user)
            defer { hub.disconnect(user: user, id: id) }
            try await outbound.write(.text(await state(token: token)))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await frame in frames { try await outbound.write(.text(frame)) }
                    // The hub ended this connection (account deleted): close it.
                    try await outbound.close(.normalClosure, reason: "account deleted")
                }
                group.addTask {
                    // Apps do not send anything we act on; reading keeps pings and the close handshake flowing.
                    for try await _ in inbound {}
                }
                _ = try await group.next()
                group.cancelAll()
            }
        }
    }

    static func token(_ request: HTTPRequest, uri: URLComponents?) -> String? {
        if let header = request.headerFields[.authorization], header.lowercased().hasPrefix("bearer ") {
            return String(header.dropFirst(7))
        }
        return uri?.queryItems?.first { $0.name == "access_token" }?.value
    }

    /// `{"type":"state","data":{"pairing":…,"moment":…}}` from identity and media, with the caller's token.
    func state(token: String) async -> String {
        async let pairing = fetch("identity", "/v1/pairing", token: token)
        async let moment = fetch("media", "/v1/widgets/pairly", token: token)
        let frame = RealtimeFeed.Frame(type: "state", data: .object(["pairing": await pairing, "moment": await moment]))
        return frame.encoded()
    }

    private func fetch(_ service: String, _ path: String, token: String) async -> JSONValue {
        guard let base = upstreams[service] else { return .null }
        var request = HTTPClientRequest(url: base.absoluteString.trimmingSuffix("/") + path)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        guard let response = try? await client.execute(request, timeout: .seconds(3)), response.status == .ok,
              let body = try? await response.body.collect(upTo: 64 * 1024),
              let value = try? JSONDecoder.lantern.decode(JSONValue.self, from: Data(buffer: body))
        else { return .null }
        return value
    }
}
