@testable import GatewayService
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LanternTestSupport
import LanternCore
import NIOCore
import Testing

/// The proxy's own HTTP path (`ProxyHandler`): what a connection carrying both proxied requests and the gateway's own
/// needs beyond what every gateway test already checks through it.
@Suite("Proxy handler")
struct ProxyHandlerTests {
    @Test("pipelined requests — proxied, the gateway's own, refused at the edge — are answered in order on one connection")
    func pipelined() async throws {
        try await withLiveGateway { port, upstream, _ in
            let token = try await upstream.token()
            let connection = try await RawConnection(port: port)
            let request = { (method: String, path: String) in
                "\(method) \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nX-Request-Id: req-\(method)-\(path.count)\r\nContent-Length: 0\r\n\r\n"
            }
            // All at once: each waits for the answer before it, whichever stack answers it.
            try await connection.send(request("GET", "/v1/me") + request("GET", "/openapi.yaml") + request("PUT", "/v1/me")
                                      + request("GET", "/v1/pairing") + request("GET", "/docs") + request("GET", "/v1/me/devices"))
            let text = try #require(try await connection.answers(6), "six answers on the one connection")
            let statuses = text.components(separatedBy: "HTTP/1.1 ").dropFirst().map { String($0.prefix(3)) }
            #expect(statuses == ["201", "200", "405", "201", "200", "201"], "\(statuses)")
            // The request id of each proxied answer is its own.
            #expect(text.contains("X-Request-Id: req-GET-6"))
            #expect(text.contains("X-Request-Id: req-PUT-6"))
            #expect(text.contains("X-Request-Id: req-GET-14"))
        }
    }

    @Test("a chunked request body reaches the service whole, with its length; HTTP/1.0 gets its answer and the connection closed")
    func framing() async throws {
        try await withLiveGateway { port, _, _ in
            let chunked = try await RawConnection(port: port)
            try await chunked.send("POST /v1/auth/device HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                                   + "5\r\n{\"a\":\r\n4\r\n\"bc\"\r\n1\r\n}\r\n0\r\n\r\n")
            let text = try #require(try await chunked.answers(1))
            #expect(text.hasPrefix("HTTP/1.1 201 "), "\(text.prefix(80))")
            #expect(text.contains(#""content-length":"10""#), "the service is sent the body's length, not the client's chunks")
            #expect(!text.lowercased().contains("transfer-encoding\":"), "no hop-by-hop field reaches the service")

            let old = try await RawConnection(port: port)
            try await old.send("GET /.well-known/jwks.json HTTP/1.0\r\nHost: x\r\n\r\n")
            let answer = try #require(try await old.closedAnswer(within: 10), "an HTTP/1.0 request without keep-alive is the last")
            #expect(answer.hasPrefix("HTTP/1.0 200 "), "\(answer.prefix(80))")
            #expect(answer.contains("Connection: close"))
        }
    }

    @Test("an answer too long to hold streams through whole; HEAD and the next request on the connection still work")
    func streamed() async throws {
        try await withGateway { client, upstream in
            let auth: HTTPFields = [.authorization: "Bearer \(try await upstream.token())"]
            let size = 3 * 1024 * 1024 + 17
            let response = try await client.execute(uri: "/v1/moments/stream/\(size)", method: .get, headers: auth)
            #expect(response.status == .ok)
            #expect(response.body.readableBytes == size)
            let bytes = Array(response.body.readableBytesView)
            #expect(bytes.enumerated().allSatisfy { $0.element == UInt8(ascii: "0") + UInt8($0.offset % 10) }, "the bytes arrive in order, none lost")
            #expect(response.headers[.requestID] != nil)
            let after = try await client.execute(uri: "/v1/me", method: .get, headers: auth)
            #expect(after.status == .created, "the connection goes on after a streamed answer")
        }
    }

    @Test("at shutdown a keep-alive connection that carried only proxied requests is closed at once, and the gateway stops")
    func shutdown() async throws {
        let upstream = try await FakeUpstream()
        try await LoopbackServer.run(router: upstream.router()) { port in
            let api = try freePort()
            let variables = ["REDIS_URL": TestEnvironment.redisURL, "STREAM_PREFIX": TestEnvironment.uniquePrefix(), "LOG_LEVEL": "error",
                             "IDENTITY_URL": "http://127.0.0.1:\(port)", "HTTP_HOST": "127.0.0.1", "HTTP_PORT": String(api), "OPS_PORT": "0"]
            let app = try await buildGatewayApplication(try GatewayConfiguration(settings: .fixed(variables)), logger: TestEnvironment.logger)
            let (connection, stopping) = try await withService(app) {
                #expect(try await eventually { (try? await RawConnection(port: api)) != nil })
                let connection = try await RawConnection(port: api)
                try await connection.send("GET /.well-known/jwks.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                #expect(try await connection.answers(1)?.hasPrefix("HTTP/1.1 200 ") == true, "answered, and the connection kept")
                return (connection, ContinuousClock.now)
            }
            // Hummingbird waits for every connection to close; one it never saw a request on is the proxy's to close.
            #expect(ContinuousClock.now - stopping < .seconds(10), "the stop waited on an idle connection")
            #expect(try await connection.closedAnswer(within: 5) != nil, "the idle connection is closed")
        }
    }

    func withGateway(_ body: @Sendable (any TestClientProtocol, FakeUpstream) async throws -> Void) async throws {
        try await withTestGateway(.live, ["CONTENT_URL": "", "MEDIA_URL": ""]) { client, upstream, _ in try await body(client, upstream) }
    }
}
