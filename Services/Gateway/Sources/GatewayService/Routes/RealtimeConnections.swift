import AsyncHTTPClient
import Foundation
import GatewayRouting
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import LanternContracts
import LanternCore
import LanternTokens
import NIOCore
import NIOHTTP1

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
        // `UpgradeRequestFilter` has already sent a handshake that `admit` refuses to the router as plain HTTP.
        guard uri?.path == "/v1/realtime", let token = Self.token(request, uri: uri),
              let (claims, user) = try? await admit(token)
        else { return .dontUpgrade }
        return .upgrade([:]) { inbound, outbound, _ in
            // Register before reading the state, so nothing that happens in between is missed.
            let (id, frames) = hub.connect(user: user, session: claims.sid)
            defer { hub.disconnect(user: user, id: id) }
            try await outbound.write(.text(await state(token: token, app: claims.app).webSocketText))
            // The writer and the reader end the connection; the expiry only asks the hub to end it.
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    var reason = "session ended"
                    for await frame in frames {
                        try await outbound.write(.text(frame.webSocketText))
                        reason = frame.endedReason ?? reason
                    }
                    // The hub ended this connection (account deleted, session ended, token expired): close it.
                    try await outbound.close(.normalClosure, reason: reason)
                    return true
                }
                group.addTask {
                    // Apps do not send anything we act on; reading keeps pings and the close handshake flowing.
                    for try await _ in inbound {}
                    return true
                }
                group.addTask {
                    try await untilExpiry(of: claims)
                    hub.end(user: user, id: id, reason: RealtimeDisconnect.SessionEnded.tokenExpired)
                    return false
                }
                while let ended = try await group.next(), !ended {}
                group.cancelAll()
            }
        }
    }

    /// Returns once the token's `exp` has passed on the gateway's clock, which is looked at at least every 30 s (so
    /// a development clock moved ahead ends sockets too). A socket lives as long as the token it was opened with.
    func untilExpiry(of claims: AccessClaims) async throws {
        let expiry = Date(timeIntervalSince1970: TimeInterval(claims.exp))
        while true {
            let left = expiry.timeIntervalSince(verifier.clock.now())
            if left <= 0 { return }
            try await Task.sleep(for: .milliseconds(Int64(min(left, 30) * 1000) + 1))
        }
    }

    /// Who may open a real-time connection: a valid user token (401 problems as on any route), of an app that has a
    /// real-time feed (403 `realtime_not_available`), whose account was not deleted (401 `account_deleted`) and whose
    /// session did not end (401 `session_revoked`).
    func admit(_ token: String) async throws -> (AccessClaims, user: String) {
        let claims = try await verifier.verify(token)
        guard let user = claims.userID?.lowercased else {
            throw Problem.forbidden("Real-time connections are for user tokens.")
        }
        guard let app = claims.app, routes.realtimeApps.contains(app) else {
            throw Problem(status: 403, code: "realtime_not_available", title: "No real-time feed",
                          detail: "\(claims.app ?? "This token's app") has no real-time feed.")
        }
        switch hub.refusal(user: user, session: claims.sid) {
        case .accountDeleted: throw TokenError("account_deleted", "The account of this token was deleted.")  // as identity answers
        case .sessionEnded: throw TokenError("session_revoked", "This token's session has ended; sign in again.")
        case nil: break
        }
        return (claims, user)
    }

    /// Whether a WebSocket handshake may go on to the upgrade (see `UpgradeRequestFilter`): for `/v1/realtime`,
    /// only when `admit` lets its token in; Socket.IO when it asks for its WebSocket transport.
    func admitsHandshake(_ head: HTTPRequestHead) async -> Bool {
        let uri = URLComponents(string: head.uri)
        // Only the two sockets upgrade; a handshake to any other path is plain HTTP (the proxy's, for the route
        // table's paths).
        guard uri?.path == "/v1/realtime" else { return SocketIOConnections.isSocketIO(uri) }
        guard let token = Self.token(authorization: head.headers.first(name: "authorization"), uri: uri) else { return false }
        return (try? await admit(token)) != nil
    }

    static func token(_ request: HTTPRequest, uri: URLComponents?) -> String? {
        token(authorization: request.headerFields[.authorization], uri: uri)
    }

    /// `Authorization: Bearer …`, else the `access_token` query parameter.
    static func token(authorization: String?, uri: URLComponents?) -> String? {
        if let header = authorization, header.lowercased().hasPrefix("bearer ") {
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

