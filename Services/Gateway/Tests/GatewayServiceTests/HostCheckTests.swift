@testable import GatewayService
import LanternTestSupport
import NIOCore
import Synchronization
import Testing

/// What the gateway answers to `request` on a connection of its own: the status, and the answer so far (the head,
/// and for a 421 its problem too).
private func hostExchange(_ port: Int, _ request: String) async throws -> (status: String, answer: String) {
    let connection = try await RawConnection(port: port)
    try await connection.send(request)
    let head = try #require(try await connection.answerHead(), "no answer to \(request.prefix(80))")
    let status = String(head.dropFirst(9).prefix(3))
    var answer = head
    if status == "421" {
        for _ in 0..<100 where !answer.hasSuffix("}") {
            try await Task.sleep(for: .milliseconds(20))
            answer = connection.collector.text.withLock { $0 }
        }
    }
    try? await connection.channel.close()
    return (status, answer)
}

private func plainGET(_ path: String, host: String, _ headers: String = "") -> String {
    "GET \(path) HTTP/1.1\r\nHost: \(host)\r\n\(headers)\r\n"
}

/// The headers of a complete WebSocket opening handshake.
private let webSocketHandshake = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"

@Suite("Gateway: the Host check of the development stack (DNS rebinding, issue #23 item 4)")
struct HostCheckTests {
    @Test("in development the public port answers only its own names: another Host gets 421 for a route, a proxied path, a WebSocket and a Socket.IO handshake alike")
    func development() async throws {
        try await withLiveGateway(["LANTERN_ENVIRONMENT": "development"]) { port, upstream, _ in
            let token = try await upstream.token()
            for host in ["127.0.0.1:\(port)", "localhost:\(port)", "LocalHost", "[::1]:\(port)"] {
                let own = try await hostExchange(port, plainGET("/openapi.yaml", host: host, "Connection: close\r\n"))
                #expect(own.status == "200", "\(host): \(own.answer.prefix(200))")
            }

            let evil = "evil.example:\(port)"
            let before = upstream.hits.value
            for (path, headers) in [("/openapi.yaml", ""), ("/v1/me", "Authorization: Bearer \(token)\r\n"), ("/no/such/route", "")] {
                let refused = try await hostExchange(port, plainGET(path, host: evil, headers + "Connection: close\r\n"))
                #expect(refused.status == "421", "\(path): \(refused.answer.prefix(300))")
                #expect(refused.answer.contains("application/problem+json") && refused.answer.contains("\"http_421\"")
                        && refused.answer.contains("Host"), "\(path): \(refused.answer.prefix(400))")
            }
            #expect(upstream.hits.value == before, "a request to another name reached a service")

            // The upgrades go through the same check: refused, they are answered as the plain request would be.
            let realtime = try await hostExchange(port, plainGET("/v1/realtime?access_token=\(token)", host: evil, webSocketHandshake))
            #expect(realtime.status == "421", "\(realtime.answer.prefix(300))")
            let socketIO = try await hostExchange(port, plainGET("/socket.io/?EIO=4&transport=websocket", host: evil, webSocketHandshake))
            #expect(socketIO.status == "421", "\(socketIO.answer.prefix(300))")
            // …and to the gateway's own names they upgrade.
            let ownRealtime = try await hostExchange(port, plainGET("/v1/realtime?access_token=\(token)", host: "127.0.0.1:\(port)", webSocketHandshake))
            #expect(ownRealtime.status == "101", "\(ownRealtime.answer.prefix(300))")
            let ownSocketIO = try await hostExchange(port, plainGET("/socket.io/?EIO=4&transport=websocket", host: "localhost:\(port)", webSocketHandshake))
            #expect(ownSocketIO.status == "101", "\(ownSocketIO.answer.prefix(300))")
        }
    }

    @Test("ALLOWED_HOSTS adds names in development; outside development without it any Host is accepted (a load balancer is in front)")
    func allowListAndProduction() async throws {
        try await withTestGateway(.live, ["LANTERN_ENVIRONMENT": "development", "ALLOWED_HOSTS": "mybox.local,192.168.1.20"]) { client, _, _ in
            let port = try #require(client.port)
            for host in ["mybox.local:\(port)", "192.168.1.20:\(port)"] {
                #expect(try await hostExchange(port, plainGET("/openapi.yaml", host: host, "Connection: close\r\n")).status == "200", "\(host)")
            }
            #expect(try await hostExchange(port, plainGET("/openapi.yaml", host: "evil.example", "Connection: close\r\n")).status == "421")
        }
        try await withTestGateway(.live) { client, _, _ in
            let port = try #require(client.port)
            #expect(try await hostExchange(port, plainGET("/openapi.yaml", host: "evil.example", "Connection: close\r\n")).status == "200")
        }
    }
}
