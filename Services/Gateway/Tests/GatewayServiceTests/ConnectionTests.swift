@testable import GatewayService
import NIOCore
import LanternTestSupport
import NIOPosix
import Synchronization
import Testing

@Suite("Gateway connections")
struct ConnectionTests {
    @Test("bytes that are not HTTP get a 400 problem (431 for an oversize header block) and the connection is closed")
    func malformed() async throws {
        try await withLiveGateway { port, _, _ in
            let requests: [(String, String)] = [
                ("FOO / HTTP/1.1\r\nHost: x\r\n\r\n", "400"),
                ("GET /health/live HTTP/9.9\r\nHost: x\r\n\r\n", "400"),
                ("GET /health/live HTTP/1.1\r\nHost: x\r\nX-A: a\u{0}b\r\n\r\n", "400"),
                ("GET /health/live HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", "400"),
                ("GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 200_000))\r\n\r\n", "431"),
                // Broken chunked framing of a body on a forwarded route: the client's mistake, never a 500.
                ("POST /v1/auth/device HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n{}\r\n0\r\n\r\n", "400"),
                ("POST /v1/auth/device HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: xchunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", "400"),
            ]
            for (request, status) in requests {
                let connection = try await RawConnection(port: port)
                try await connection.send(request)
                let answer = try #require(try await connection.closedAnswer(), "still open after: \(request.prefix(60))")
                #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(request.prefix(60)) → \(answer.prefix(80))")
                #expect(answer.contains("application/problem+json"))
            }
        }
    }

    @Test("a connection that sends no complete request head within GATEWAY_HEADER_TIMEOUT is closed; so is one idle for GATEWAY_IDLE_TIMEOUT, and one whose body stops coming")
    func timeouts() async throws {
        try await withLiveGateway(["GATEWAY_HEADER_TIMEOUT": "3", "GATEWAY_IDLE_TIMEOUT": "1"]) { port, _, _ in
            let silent = try await RawConnection(port: port)
            #expect(try await silent.closedAnswer() == "", "a silent connection is closed without an answer")

            let slow = try await RawConnection(port: port)
            try? await slow.send("GET /health/live HTTP/1.1\r\nHost: x\r\n")  // may come after the close on a loaded machine
            #expect(try await slow.closedAnswer() == "", "a head that never ends is not waited for")

            let idle = try await RawConnection(port: port)
            try await idle.send("GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
            let answer = try #require(try await idle.closedAnswer(), "an idle keep-alive connection is closed")
            #expect(answer.hasPrefix("HTTP/1.1 200 "), "the request before the idle time was answered")

            // A body that stops coming holds nothing for ever, on a proxied route or one of the gateway's own.
            for path in ["/v1/auth/device", "/openapi.yaml"] {
                let stalled = try await RawConnection(port: port)
                try await stalled.send("POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":")
                #expect(try await stalled.closedAnswer(within: 15) != nil, "\(path): a stalled body is not waited for")
            }
        }
    }

    @Test("one address holds at most GATEWAY_MAX_CONNECTIONS_PER_ADDRESS connections; the next gets 503 and is closed, a freed slot is reused")
    func perAddressCap() async throws {
        try await withLiveGateway(["GATEWAY_MAX_CONNECTIONS_PER_ADDRESS": "3", "GATEWAY_HEADER_TIMEOUT": "60", "GATEWAY_IDLE_TIMEOUT": "300"]) { port, _, _ in
            // Kept-alive connections, each answered once, until the gateway refuses one (the test client may hold a
            // connection of its own, so the first refusal comes at the third or fourth).
            var open: [RawConnection] = []
            var refusal: String?
            for _ in 0..<5 where refusal == nil {
                let connection = try await RawConnection(port: port)
                try? await connection.send("GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
                let head = try await connection.answerHead() ?? ""
                if head.hasPrefix("HTTP/1.1 200 ") { open.append(connection) } else { refusal = try await connection.closedAnswer() ?? head }
            }
            let refused = try #require(refusal, "no connection was refused")
            #expect(refused.hasPrefix("HTTP/1.1 503 ") && refused.contains("too_many_connections"), "\(refused.prefix(120))")
            #expect(open.count <= 3)

            try? await open.first?.channel.close()
            // The slot comes free when the gateway sees the close; a new connection is then served.
            let served = try await eventually {
                let next = try await RawConnection(port: port)
                try? await next.send("GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                return (try await next.closedAnswer())?.hasPrefix("HTTP/1.1 200 ") == true
            }
            #expect(served)
            for connection in open { try? await connection.channel.close() }
        }
    }
}
