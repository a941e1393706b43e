import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A TCP proxy in front of the test PostgreSQL, to take the database away from one service under test without
/// touching the server every other test shares: `crash()` closes every connection and refuses new ones (what a
/// crashed server looks like to a client), `silence()` keeps every connection open but stops its packets (a network
/// partition: nothing is refused, nothing answers), `partition()` does both (what is open stays silent, what is new is
/// refused), `restore()` listens and forwards again for new connections.
public final class DatabaseProxy: Sendable {
    public enum Mode: Sendable { case forwarding, crashed, silent }

    private let upstreamHost: String
    private let upstreamPort: Int
    private let state = Mutex<(mode: Mode, server: (any Channel)?, port: Int, connections: [ObjectIdentifier: any Channel],
                               silenced: Set<ObjectIdentifier>)>((.forwarding, nil, 0, [:], []))

    public init(upstream url: String) throws {
        guard let components = URLComponents(string: url), let host = components.host else { throw URLError(.badURL) }
        upstreamHost = host
        upstreamPort = components.port ?? 5432
    }

    /// `url` with the proxy's address in place of the server's.
    public func url(for url: String) -> String {
        var components = URLComponents(string: url)
        components?.host = "127.0.0.1"
        components?.port = state.withLock { $0.port }
        return components?.string ?? url
    }

    public func start() async throws {
        try await listen(port: 0)
    }

    private func listen(port: Int) async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.autoRead, value: true)
            .childChannelInitializer { [self] inbound in
                let upstream = ClientBootstrap(group: inbound.eventLoop)
                    .connect(host: upstreamHost, port: upstreamPort)
                return upstream.flatMap { outbound in
                    self.track(inbound)
                    self.track(outbound)
                    let (a, b) = Glue.pair(self)
                    return inbound.pipeline.addHandler(a).flatMap { outbound.pipeline.addHandler(b) }.map {
                        a.peer = outbound
                        b.peer = inbound
                    }
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        state.withLock { $0.server = server; $0.port = server.localAddress?.port ?? 0 }
    }

    private func track(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        state.withLock { state in
            state.connections[id] = channel
            if state.mode == .silent { state.silenced.insert(id) }
        }
        channel.closeFuture.whenComplete { _ in
            self.state.withLock { state in
                state.connections.removeValue(forKey: id)
                state.silenced.remove(id)
            }
        }
    }

    /// Whether bytes read on `channel` are dropped: it was open (or opened) while the proxy was silent.
    func isSilenced(_ channel: any Channel) -> Bool {
        state.withLock { $0.silenced.contains(ObjectIdentifier(channel)) }
    }

    /// Every connection open now, and any opened until `restore()`, stays open and never carries a byte again.
    public func silence() {
        state.withLock { state in
            state.mode = .silent
            state.silenced.formUnion(state.connections.keys)
        }
    }

    var mode: Mode { state.withLock { $0.mode } }

    /// Every open connection stays open and never carries a byte again, and nothing listens on the port: a query in
    /// flight is never answered, and the next connection is refused. `restore()` listens again.
    public func partition() async {
        let server = state.withLock { state in
            state.mode = .crashed
            state.silenced.formUnion(state.connections.keys)
            return state.server
        }
        try? await server?.close()
    }

    /// Every connection closed, and nothing listens on the port.
    public func crash() async {
        let (server, connections) = state.withLock { state in
            state.mode = .crashed
            return (state.server, Array(state.connections.values))
        }
        try? await server?.close()
        for connection in connections { try? await connection.close() }
    }

    /// The port listens again, and new connections are forwarded (silenced ones stay silent).
    public func restore() async throws {
        let (wasCrashed, port) = state.withLock { state -> (Bool, Int) in
            let crashed = state.mode == .crashed
            state.mode = .forwarding
            return (crashed, state.port)
        }
        if wasCrashed { try await listen(port: port) }
    }

    public func stop() async {
        await crash()
    }

    /// Copies bytes to the peer.
    final class Glue: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        let proxy: DatabaseProxy
        var peer: (any Channel)?

        init(proxy: DatabaseProxy) { self.proxy = proxy }

        static func pair(_ proxy: DatabaseProxy) -> (Glue, Glue) { (Glue(proxy: proxy), Glue(proxy: proxy)) }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !proxy.isSilenced(context.channel) else { return }
            peer?.writeAndFlush(unwrapInboundIn(data), promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            peer?.close(promise: nil)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
