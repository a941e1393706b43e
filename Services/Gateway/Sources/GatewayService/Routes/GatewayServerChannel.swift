import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// The gateway's HTTP/1 server channel: Hummingbird's WebSocket-upgrade channel with `UpgradeRequestFilter` in front
/// of NIO's upgrade handler.
///
/// Why: NIO's typed upgrade handler does not keep the head of a request that names an `Upgrade` it then finds no
/// upgrader for (an incomplete WebSocket handshake, `Upgrade: h2c`): the request vanishes and the connection gets
/// no answer (seen with schemathesis on `/v1/realtime`, and with `curl --http2`). Such a request is plain HTTP to
/// the gateway, so the filter takes its `Upgrade` away before that handler sees it.
struct GatewayServerChannel: ServerChildChannel {
    let inner: HTTP1WebSocketUpgradeChannel

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1WebSocketUpgradeChannel.Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let upgrade = try channel.pipeline.syncOperations.handler(
                type: NIOTypedHTTPServerUpgradeHandler<HTTP1WebSocketUpgradeChannel.UpgradeResult>.self)
            try channel.pipeline.syncOperations.addHandler(UpgradeRequestFilter(), position: .before(upgrade))
            return value
        }
    }

    func handle(value: HTTP1WebSocketUpgradeChannel.Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// `http1WebSocketUpgrade` through `GatewayServerChannel`.
    static func gateway(
        configuration: WebSocketServerConfiguration,
        shouldUpgrade: @escaping @Sendable (HTTPRequest, any Channel, Logger) async throws
            -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>>
    ) -> HTTPServerBuilder {
        .init { responder in
            GatewayServerChannel(inner: HTTP1WebSocketUpgradeChannel(responder: responder, configuration: configuration, shouldUpgrade: shouldUpgrade))
        }
    }
}

/// Lets only a complete WebSocket opening handshake (RFC 6455 §4.2.1: `Upgrade: websocket`, `Connection: Upgrade`,
/// a 16-byte `Sec-WebSocket-Key`, `Sec-WebSocket-Version: 13`) reach NIO's upgrade handler as an upgrade; from any
/// other request it removes `Upgrade` (and `upgrade` from `Connection`), so it is answered as plain HTTP. Once a
/// handshake has passed, it leaves the pipeline: what follows an upgrade is WebSocket frames, not HTTP.
final class UpgradeRequestFilter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data), head.headers.contains(name: "upgrade") else {
            context.fireChannelRead(data)
            return
        }
        if Self.isWebSocketHandshake(head.headers) {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        head.headers.remove(name: "upgrade")
        let connection = head.headers[canonicalForm: "connection"].filter { $0.lowercased() != "upgrade" }
        head.headers.remove(name: "connection")
        for token in connection { head.headers.add(name: "connection", value: String(token)) }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    static func isWebSocketHandshake(_ headers: HTTPHeaders) -> Bool {
        guard headers[canonicalForm: "upgrade"].contains(where: { $0.lowercased() == "websocket" }),
              headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "upgrade" }),
              headers["sec-websocket-key"].count == 1, let key = headers.first(name: "sec-websocket-key"),
              let bytes = Data(base64Encoded: key.trimmingCharacters(in: .whitespaces)), bytes.count == 16 else { return false }
        return headers["sec-websocket-version"].map { $0.trimmingCharacters(in: .whitespaces) } == ["13"]
    }
}
