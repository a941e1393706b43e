import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import LanternContracts
import LanternCore
import LanternTokens
import NIOCore

/// `GET /v1/realtime` as a WebSocket: JSON frames `{"type": …, "data": {…}}` for the signed-in user.
///
/// The token comes in `Authorization: Bearer …` or, for clients that cannot set headers on a WebSocket, the
/// `access_token` query parameter. The first frame is always `state` (what the app's services say the user should
/// see now, `RealtimeState`), so an app that was offline catches up before live frames follow. Requests that
/// cannot upgrade fall through to the router, which answers 401 or 426.
struct RealtimeConnections: Sendable {
    let hub: RealtimeHub
    let verifier: AccessTokenVerifier
    let client: HTTPClient
    let upstreams: [String: URL]
    let routes: RouteTable

    func shouldUpgrade(_ request: HTTPRequest) async throws -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        let uri = URLComponents(string: request.path ?? "")
        guard uri?.path == "/v1/realtime", let token = Self.token(request, uri: uri),
              let claims = try? await verifier.verify(token), let user = claims.userID?.lowercased
        else { return .dontUpgrade }
        return .upgrade([:]) { inbound, outbound, _ in
            // Register before reading the state, so nothing that happens in between is missed.
            let (id, frames) = hub.connect(user: user)
            defer { hub.disconnect(user: user, id: id) }
            try await outbound.write(.text(await state(token: token, app: claims.app).webSocketText))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await frame in frames { try await outbound.write(.text(frame.webSocketText)) }
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

    /// `{"type":"state","data":{…}}`: each key from the service the route table names for the app, asked with the
    /// caller's token at `RealtimeState.path`; `null` for a key whose service is not deployed or does not answer.
    func state(token: String, app: String?) async -> OutboundFrame {
        let sources = app.flatMap { routes.realtimeState[$0] } ?? []
        let answers = await withTaskGroup(of: (String, JSONValue?).self) { group in
            for service in Set(sources.map(\.service)) {
                group.addTask { (service, await fetchState(from: service, token: token)) }
            }
            var answers: [String: JSONValue] = [:]
            for await (service, answer) in group { answers[service] = answer }
            return answers
        }
        var data: [String: JSONValue] = [:]
        for (key, service) in sources { data[key] = answers[service]?[key] ?? .null }
        return OutboundFrame(type: RealtimeState.frameType, data: .object(data))
    }

    private func fetchState(from service: String, token: String) async -> JSONValue? {
        guard let base = upstreams[service] else { return nil }
        var request = HTTPClientRequest(url: base.absoluteString.trimmingSuffix("/") + RealtimeState.path)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        guard let response = try? await client.execute(request, timeout: .seconds(3)), response.status == .ok,
              let body = try? await response.body.collect(upTo: 64 * 1024),
              let value = try? JSONDecoder.lantern.decode(JSONValue.self, from: Data(buffer: body))
        else { return nil }
        return value
    }
}

