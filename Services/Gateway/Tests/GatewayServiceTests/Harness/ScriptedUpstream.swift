@testable import GatewayService
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// A bare HTTP/1.1 server on loopback whose answers are chosen by path, to put the proxy's client through what real
/// services do to it: keep-alive, long streamed bodies, closing connections, hanging half-way.
final class ScriptedUpstream: Sendable {
    let connections = HitCounter()
    let channel: any Channel

    init() async throws {
        let accepted = connections
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                accepted.increment()
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Script(connections: accepted))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    var port: Int { channel.localAddress?.port ?? 0 }
    func close() async { try? await channel.close() }

    final class Script: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let connections: HitCounter
        var head: HTTPRequestHead?
        var body = 0
        init(connections: HitCounter) { self.connections = connections }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): self.head = head; body = 0
            case .body(let chunk): body += chunk.readableBytes
            case .end: if let head { answer(head, context: context) }
            }
        }

        func answer(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
            switch head.uri {
            case "/big":
                // 1 MiB in 64 KiB chunks, no length: the client must stream it.
                write(context, status: .ok, headers: ["Transfer-Encoding": "chunked"], end: false)
                for index in 0..<16 {
                    context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(repeating: UInt8(65 + index), count: 64 * 1024)))), promise: nil)
                }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            case "/close":
                write(context, status: .ok, headers: ["Connection": "close", "Content-Length": "3"], body: "bye")
                context.close(promise: nil)
            case "/drop":
                context.close(promise: nil)
            case "/hang":
                // Half an answer, then nothing.
                write(context, status: .ok, headers: ["Content-Length": "10"], end: false)
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "12345")))), promise: nil)
            case _ where head.method == .HEAD:
                write(context, status: .ok, headers: ["Content-Length": "42"])
            case "/connections":
                write(context, status: .ok, body: "\(connections.value)")
            default:
                write(context, status: .ok, body: "\(head.method.rawValue) \(head.uri) \(body) \(head.headers.first(name: "host") ?? "-")")
            }
        }

        func write(_ context: ChannelHandlerContext, status: HTTPResponseStatus, headers: HTTPHeaders = [:], body: String? = nil, end: Bool = true) {
            var headers = headers
            if let body, !headers.contains(name: "content-length") { headers.add(name: "Content-Length", value: String(body.utf8.count)) }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
            if let body { context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil) }
            if end { context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil) } else { context.flush() }
        }
    }
}
