import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import LanternCore
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// The gateway's HTTP/1 server channel: Hummingbird's WebSocket-upgrade channel, with the gateway's own handlers in
/// front of NIO's upgrade handler.
///
/// Why each one:
/// - `UpgradeRequestFilter`: NIO's typed upgrade handler does not keep the head of a request that names an `Upgrade`
///   it then finds no upgrader for (an incomplete WebSocket handshake, `Upgrade: h2c`): the request vanishes and the
///   connection gets no answer. Such a request is plain HTTP to the gateway, so the filter takes its `Upgrade` away.
/// - `MalformedRequestAnswer`: the upgrade channel turns NIO's protocol error handling off (Hummingbird's own takes
///   over only after the first request), so bytes that are not HTTP got no answer and the connection stayed open.
/// - `ConnectionGuard`: a connection must send its first request head within `headerTimeout` (the idle timeout only
///   starts after the first request), and one address holds at most `maxConnectionsPerAddress` (a trusted proxy
///   carries many clients, so its connections are not capped).
/// - `ProxyHandler`: every path of the route table is answered there; the rest goes on to Hummingbird. It keeps
///   the idle timeout between requests of both (Hummingbird's own is off: it sees only its own requests).
struct GatewayServerChannel: ServerChildChannel {
    let inner: HTTP1WebSocketUpgradeChannel
    let limits: ConnectionLimits
    let proxy: ProxyEdge
    let admitsHandshake: @Sendable (HTTPRequestHead) async -> Bool
    /// Development only: every answer's `Date` says the travelled time (`DevelopmentDateHeader`).
    var travelledDate = false

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1WebSocketUpgradeChannel.Value> {
        var admitted = true
        if let address = channel.remoteAddress?.ipAddress, !limits.uncapped.contains(address) {
            admitted = limits.admit(address)
            if admitted { channel.closeFuture.whenComplete { _ in limits.release(address) } }
        }
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            if !admitted {
                // Over the per-address cap: a 503 in front of everything, then the door shut.
                try channel.pipeline.syncOperations.addHandler(RefuseConnection(), position: .first)
                return value
            }
            let upgrade = try channel.pipeline.syncOperations.handler(
                type: NIOTypedHTTPServerUpgradeHandler<HTTP1WebSocketUpgradeChannel.UpgradeResult>.self)
            try channel.pipeline.syncOperations.addHandler(MalformedRequestAnswer(), position: .before(upgrade))
            try channel.pipeline.syncOperations.addHandler(ConnectionGuard(headerTimeout: limits.headerTimeout), position: .before(upgrade))
            try channel.pipeline.syncOperations.addHandler(UpgradeRequestFilter(admits: admitsHandshake), position: .before(upgrade))
            if travelledDate { try channel.pipeline.syncOperations.addHandler(DevelopmentDateHeader(), position: .before(upgrade)) }
            try channel.pipeline.syncOperations.addHandler(ProxyHandler(edge: proxy), position: .before(upgrade))
            return value
        }
    }

    func handle(value: HTTP1WebSocketUpgradeChannel.Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// How long and how many connections the gateway keeps (`GATEWAY_HEADER_TIMEOUT`, `GATEWAY_IDLE_TIMEOUT`,
/// `GATEWAY_MAX_CONNECTIONS_PER_ADDRESS`), and the count of open connections per client address.
final class ConnectionLimits: Sendable {
    let headerTimeout: TimeAmount
    let maxConnectionsPerAddress: Int
    /// Addresses never capped: the trusted proxies.
    let uncapped: TrustedProxies
    private let open = Mutex<[String: Int]>([:])

    init(headerTimeout: TimeAmount, maxConnectionsPerAddress: Int, uncapped: TrustedProxies = .none) {
        self.headerTimeout = headerTimeout
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.uncapped = uncapped
    }

    /// Counts a new connection from `address`; false (not counted) when the address is at its cap. 0: no cap.
    func admit(_ address: String) -> Bool {
        open.withLock { open in
            let current = open[address, default: 0]
            if maxConnectionsPerAddress > 0 && current >= maxConnectionsPerAddress { return false }
            open[address] = current + 1
            return true
        }
    }

    func release(_ address: String) {
        open.withLock { open in
            let left = open[address, default: 1] - 1
            open[address] = left > 0 ? left : nil
        }
    }
}

/// Answers a connection over its address's cap with a 503 problem and closes it, reading nothing.
final class RefuseConnection: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    static let body = #"{"type":"https://lantern.dev/problems/too-many-connections","title":"Too many connections","status":503,"#
        + #""code":"too_many_connections","detail":"This address has too many connections open to the gateway."}"#
    static let answer = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 10\r\n"
        + "Content-Type: application/problem+json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { refuse(context) }
    }

    func channelActive(context: ChannelHandlerContext) { refuse(context) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    private func refuse(_ context: ChannelHandlerContext) {
        context.writeAndFlush(NIOAny(ByteBuffer(string: Self.answer))).whenComplete { _ in context.close(promise: nil) }
    }
}

/// Closes a connection whose first request head has not arrived within `headerTimeout` of its opening (a slow or
/// silent client holding a descriptor). Once a head has arrived it leaves the pipeline: from then on Hummingbird's
/// idle timeout closes connections left idle between requests.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    let headerTimeout: TimeAmount
    private var deadline: Scheduled<Void>?

    init(headerTimeout: TimeAmount) { self.headerTimeout = headerTimeout }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: headerTimeout) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
        if case .head = unwrapInboundIn(data) {
            deadline?.cancel()
            deadline = nil
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}

/// Answers bytes that are not HTTP (an unknown method, a bad version, NUL or CR inside a header, a header block over
/// the limit, broken chunked framing) with a 400 problem — 431 for oversize headers — and closes the connection, as
/// RFC 9112 §2.2 allows once a message cannot be framed.
final class MalformedRequestAnswer: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// A response has begun and not ended: no second one can be written on this connection.
    private var responding = false

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        guard !responding else {
            context.close(promise: nil)
            return
        }
        let tooLarge = parserError == .headerOverflow
        let body = ByteBuffer(string: #"{"type":"https://lantern.dev/problems/\#(tooLarge ? "headers-too-large" : "malformed-request")","title":"\#(tooLarge ? "Request header fields too large" : "Bad request")","status":\#(tooLarge ? 431 : 400),"code":"\#(tooLarge ? "headers_too_large" : "malformed_request")","detail":"The request is not valid HTTP/1.1 (\#(parserError))."}"#)
        let head = HTTPResponseHead(version: .http1_1, status: tooLarge ? .requestHeaderFieldsTooLarge : .badRequest,
                                    headers: ["Connection": "close", "Content-Type": "application/problem+json",
                                              "Content-Length": String(body.readableBytes)])
        responding = true
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.code >= 200 || head.status.code == 101: responding = true
        case .end: responding = false
        default: break
        }
        context.write(data, promise: promise)
    }
}

extension HTTPServerBuilder {
    /// `http1WebSocketUpgrade` through `GatewayServerChannel`.
    static func gateway(
        configuration: WebSocketServerConfiguration,
        limits: ConnectionLimits,
        proxy: ProxyEdge,
        admitsHandshake: @escaping @Sendable (HTTPRequestHead) async -> Bool,
        travelledDate: Bool = false,
        shouldUpgrade: @escaping @Sendable (HTTPRequest, any Channel, Logger) async throws
            -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>>
    ) -> HTTPServerBuilder {
        .init { responder in
            GatewayServerChannel(
                inner: HTTP1WebSocketUpgradeChannel(responder: responder,
                                                    configuration: .init(http1: .init(idleTimeout: nil), ws: configuration),
                                                    shouldUpgrade: shouldUpgrade),
                limits: limits, proxy: proxy, admitsHandshake: admitsHandshake, travelledDate: travelledDate)
        }
    }
}

/// Lets only a complete WebSocket opening handshake (RFC 6455 §4.2.1: `Upgrade: websocket`, `Connection: Upgrade`,
/// a 16-byte `Sec-WebSocket-Key`, `Sec-WebSocket-Version: 13`) that the gateway will accept reach NIO's upgrade
/// handler as an upgrade; from any other request it removes `Upgrade` (and `upgrade` from `Connection`), so it is
/// answered as plain HTTP — by the router, which says why (401 for the token, 403 for an app without a feed, 426).
/// Whether a handshake will be accepted is asked of `admits` (the token check may fetch keys): the request's parts
/// wait here meanwhile. Once a handshake has passed, the filter leaves the pipeline: what follows an upgrade is
/// WebSocket frames, not HTTP.
final class UpgradeRequestFilter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    let admits: @Sendable (HTTPRequestHead) async -> Bool
    /// Parts that arrived while a handshake was being checked, in order.
    private var held: [HTTPServerRequestPart]?

    init(admits: @escaping @Sendable (HTTPRequestHead) async -> Bool) { self.admits = admits }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if held != nil {
            held?.append(part)
            return
        }
        guard case .head(let head) = part, head.headers.contains(name: "upgrade") else {
            context.fireChannelRead(data)
            return
        }
        guard Self.isWebSocketHandshake(head.headers) else {
            context.fireChannelRead(wrapInboundOut(.head(Self.plain(head))))
            return
        }
        held = []
        let admits = self.admits
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.makeFutureWithTask { await admits(head) }.whenComplete { result in
            let (filter, context) = bound.value
            filter.release(head: head, admitted: (try? result.get()) == true, context: context)
        }
    }

    private func release(head: HTTPRequestHead, admitted: Bool, context: ChannelHandlerContext) {
        let parts = held ?? []
        held = nil
        context.fireChannelRead(wrapInboundOut(.head(admitted ? head : Self.plain(head))))
        for part in parts { context.fireChannelRead(wrapInboundOut(part)) }
        context.fireChannelReadComplete()
        if admitted {
            // What follows is WebSocket frames: the HTTP-only handlers leave with this one.
            if let answer = try? context.pipeline.syncOperations.handler(type: MalformedRequestAnswer.self) {
                context.pipeline.syncOperations.removeHandler(answer, promise: nil)
            }
            if let date = try? context.pipeline.syncOperations.handler(type: DevelopmentDateHeader.self) {
                context.pipeline.syncOperations.removeHandler(date, promise: nil)
            }
            if let proxy = try? context.pipeline.syncOperations.handler(type: ProxyHandler.self) {
                context.pipeline.syncOperations.removeHandler(proxy, promise: nil)
            }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if held == nil { context.fireChannelReadComplete() }
    }

    /// The head without its upgrade: plain HTTP.
    static func plain(_ head: HTTPRequestHead) -> HTTPRequestHead {
        var head = head
        head.headers.remove(name: "upgrade")
        let connection = head.headers[canonicalForm: "connection"].filter { $0.lowercased() != "upgrade" }
        head.headers.remove(name: "connection")
        for token in connection { head.headers.add(name: "connection", value: String(token)) }
        return head
    }

    static func isWebSocketHandshake(_ headers: HTTPHeaders) -> Bool {
        guard headers[canonicalForm: "upgrade"].contains(where: { $0.lowercased() == "websocket" }),
              headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "upgrade" }),
              headers["sec-websocket-key"].count == 1, let key = headers.first(name: "sec-websocket-key"),
              let bytes = Data(base64Encoded: key.trimmingCharacters(in: .whitespaces)), bytes.count == 16 else { return false }
        return headers["sec-websocket-version"].map { $0.trimmingCharacters(in: .whitespaces) } == ["13"]
    }
}

/// Development's time travel at the edge: Hummingbird writes `Date` from the machine's clock, so in a development
/// stack whose clock was moved forward (`DevelopmentTime`) each answer's `Date` is written again with the travelled
/// time, and an app sees the same "now" as every service behind the gateway. It leaves the pipeline with the other
/// HTTP-only handlers when a WebSocket handshake is admitted (`UpgradeRequestFilter`).
final class DevelopmentDateHeader: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard DevelopmentTime.offset != 0, case .head(var head) = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        head.headers.replaceOrAdd(name: "date", value: HTTPDate.string(from: WallClock.system.now()))
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }
}
