@testable import GatewayService
import NIOCore
import LanternTestSupport
import NIOPosix
import Synchronization
import Testing

/// A TCP connection to the gateway that sends raw bytes and collects everything that comes back until the gateway
/// closes it (or `wait` runs out).
final class RawConnection: Sendable {
    final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let text = Mutex("")
        let closed: EventLoopPromise<String>
        init(closed: EventLoopPromise<String>) { self.closed = closed }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let chunk = String(buffer: unwrapInboundIn(data))
            text.withLock { $0 += chunk }
        }
        func channelInactive(context: ChannelHandlerContext) { closed.succeed(text.withLock { $0 }) }
        func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
    }

    let channel: any Channel
    let closed: EventLoopFuture<String>
    let collector: Collector

    init(port: Int) async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let promise = loop.makePromise(of: String.self)
        let collector = Collector(closed: promise)
        self.collector = collector
        channel = try await ClientBootstrap(group: loop)
            .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) } }
            .connect(host: "127.0.0.1", port: port).get()
        closed = promise.futureResult
    }

    func send(_ text: String) async throws { try await channel.writeAndFlush(ByteBuffer(string: text)) }
    func send(_ bytes: [UInt8]) async throws { try await channel.writeAndFlush(ByteBuffer(bytes: bytes)) }

    /// The answer's head (through the blank line) as soon as it is complete, open connection or not.
    func answerHead(within seconds: Int = 30) async throws -> String? {
        for _ in 0..<(seconds * 20) {
            let text = collector.text.withLock { $0 }
            if let end = text.range(of: "\r\n\r\n") { return String(text[..<end.upperBound]) }
            if !channel.isActive { return nil }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    /// What came back, once the gateway closed the connection; nil if it is still open after `seconds`.
    func closedAnswer(within seconds: Int64 = 30) async throws -> String? {
        let loop = channel.eventLoop
        let outcome = loop.makePromise(of: String?.self)
        let timer = loop.scheduleTask(in: .seconds(seconds)) { outcome.succeed(nil) }
        closed.whenComplete { result in
            timer.cancel()
            outcome.succeed(try? result.get())
        }
        let answer = try await outcome.futureResult.get()
        if answer == nil { try? await channel.close() }
        return answer
    }
}

@Suite("Gateway connections")
struct ConnectionTests {
    func withLiveGateway(_ extra: [String: String] = [:], _ body: @Sendable (Int) async throws -> Void) async throws {
        try await withTestGateway(.live, extra) { client, _, _ in try await body(try #require(client.port)) }
    }

    @Test("bytes that are not HTTP get a 400 problem (431 for an oversize header block) and the connection is closed")
    func malformed() async throws {
        try await withLiveGateway { port in
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

    @Test("a connection that sends no complete request head within GATEWAY_HEADER_TIMEOUT is closed; so is one idle for GATEWAY_IDLE_TIMEOUT")
    func timeouts() async throws {
        try await withLiveGateway(["GATEWAY_HEADER_TIMEOUT": "3", "GATEWAY_IDLE_TIMEOUT": "1"]) { port in
            let silent = try await RawConnection(port: port)
            #expect(try await silent.closedAnswer() == "", "a silent connection is closed without an answer")

            let slow = try await RawConnection(port: port)
            try? await slow.send("GET /health/live HTTP/1.1\r\nHost: x\r\n")  // may come after the close on a loaded machine
            #expect(try await slow.closedAnswer() == "", "a head that never ends is not waited for")

            let idle = try await RawConnection(port: port)
            try await idle.send("GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
            let answer = try #require(try await idle.closedAnswer(), "an idle keep-alive connection is closed")
            #expect(answer.hasPrefix("HTTP/1.1 200 "), "the request before the idle time was answered")
        }
    }

    @Test("one address holds at most GATEWAY_MAX_CONNECTIONS_PER_ADDRESS connections; the next gets 503 and is closed, a freed slot is reused")
    func perAddressCap() async throws {
        try await withLiveGateway(["GATEWAY_MAX_CONNECTIONS_PER_ADDRESS": "3", "GATEWAY_HEADER_TIMEOUT": "60", "GATEWAY_IDLE_TIMEOUT": "300"]) { port in
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
