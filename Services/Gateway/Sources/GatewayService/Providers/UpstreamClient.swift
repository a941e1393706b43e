import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// The gateway's HTTP/1.1 client for proxied requests: keep-alive connections to each upstream, pooled per event
/// loop, and a request goes out on the loop that serves its client.
///
/// Why not AsyncHTTPClient here: every proxied request paid for its URL parsing, header validation, connection-pool
/// state machine and several hops between threads — about a third of the gateway's instructions per request
/// (docs/benchmarks.md). A proxy needs less: a pool keyed by upstream address, one request at a time per
/// connection, the answer of known small length handed back whole, anything else streamed with backpressure. The
/// gateway's other calls (health, real-time state) keep using AsyncHTTPClient.
public final class UpstreamClient: Service, Sendable {
    public struct Configuration: Sendable {
        /// Connections to one upstream from one event loop; more requests wait for one to come free.
        public var maxConnectionsPerLoop = 64
        public var connectTimeout: TimeAmount = .seconds(2)
        /// An unused keep-alive connection is closed after this long.
        public var idleTimeout: TimeAmount = .seconds(60)
        /// Answers of known length up to this size are read whole; larger or unknown-length ones stream.
        public var bufferedResponseLimit = 256 * 1024
        public init() {}
    }

    private let pools: [ObjectIdentifier: LoopPool]
    private let group: any EventLoopGroup
    let configuration: Configuration

    public init(group: any EventLoopGroup, configuration: Configuration = .init()) {
        self.group = group
        self.configuration = configuration
        var pools: [ObjectIdentifier: LoopPool] = [:]
        for loop in group.makeIterator() { pools[ObjectIdentifier(loop)] = LoopPool(eventLoop: loop, configuration: configuration) }
        self.pools = pools
    }

    /// Sends `request` to `host:port` from `eventLoop`'s pool and returns the answer's head and body.
    /// A connection that turns out closed before any answer arrived is replaced once for idempotent methods.
    /// The answer's future completes on `eventLoop`, and a streamed body is read there.
    public func execute(_ request: UpstreamRequest, host: String, port: Int, on eventLoop: any EventLoop,
                        deadline: NIODeadline) -> EventLoopFuture<UpstreamResponse> {
        guard let pool = pools[ObjectIdentifier(eventLoop)] else {
            return eventLoop.makeFailedFuture(UpstreamError.connectFailed("the event loop is not one of the client's group"))
        }
        let address = UpstreamAddress(host: host, port: port)
        return pool.execute(request, to: address, deadline: deadline).flatMapError { error in
            guard case UpstreamError.closedBeforeAnswer(reused: true) = error, request.isIdempotent else {
                return eventLoop.makeFailedFuture(error)
            }
            return pool.execute(request, to: address, deadline: deadline, fresh: true)
        }
    }

    public func run() async throws {
        try? await gracefulShutdown()
        for pool in pools.values { try? await pool.closeAll().get() }
    }
}

/// What the proxy sends: the head (path and query, headers without hop-by-hop ones) and the whole body if any.
public struct UpstreamRequest: Sendable {
    public var head: HTTPRequestHead
    public var body: ByteBuffer?

    public init(head: HTTPRequestHead, body: ByteBuffer?) {
        self.head = head
        self.body = body
    }

    /// RFC 9110 §9.2.2: safe to send again when the first attempt never reached the service.
    var isIdempotent: Bool { [.GET, .HEAD, .OPTIONS, .PUT, .DELETE].contains(head.method) }
}

public struct UpstreamResponse: Sendable {
    public enum Body: Sendable {
        case buffered(ByteBuffer)
        case stream(UpstreamBodyStream)
    }

    public var head: HTTPResponseHead
    public var body: Body
}

public enum UpstreamError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing listens, or the connection could not be made in time.
    case connectFailed(String)
    /// No complete answer before the deadline.
    case timedOut
    /// The connection closed before the answer's head; `reused` when it had served requests before.
    case closedBeforeAnswer(reused: Bool)
    /// The connection closed, or the answer broke HTTP, part-way through.
    case brokenAnswer(String)

    public var description: String {
        switch self {
        case .connectFailed(let reason): "could not connect: \(reason)"
        case .timedOut: "no answer before the deadline"
        case .closedBeforeAnswer(let reused): "the connection closed before the answer\(reused ? " (a reused connection)" : "")"
        case .brokenAnswer(let reason): "the answer broke off: \(reason)"
        }
    }
}

struct UpstreamAddress: Hashable, Sendable {
    var host: String
    var port: Int
}

/// The connections of one event loop. Touched only on that loop (every entry point hops onto it first).
final class LoopPool: @unchecked Sendable {
    let eventLoop: any EventLoop
    let configuration: UpstreamClient.Configuration
    private var idle: [UpstreamAddress: [UpstreamConnection]] = [:]
    private var open: [UpstreamAddress: Int] = [:]
    private var waiting: [UpstreamAddress: CircularBuffer<EventLoopPromise<UpstreamConnection>>] = [:]
    private var closing = false

    init(eventLoop: any EventLoop, configuration: UpstreamClient.Configuration) {
        self.eventLoop = eventLoop
        self.configuration = configuration
    }

    func execute(_ request: UpstreamRequest, to address: UpstreamAddress, deadline: NIODeadline, fresh: Bool = false) -> EventLoopFuture<UpstreamResponse> {
        if eventLoop.inEventLoop { return executeOnLoop(request, to: address, deadline: deadline, fresh: fresh) }
        return eventLoop.flatSubmit { self.executeOnLoop(request, to: address, deadline: deadline, fresh: fresh) }
    }

    private func executeOnLoop(_ request: UpstreamRequest, to address: UpstreamAddress, deadline: NIODeadline, fresh: Bool) -> EventLoopFuture<UpstreamResponse> {
        // Waiting for a connection counts against the deadline; the exchange itself is timed by its handler.
        let giveUp = eventLoop.makePromise(of: Void.self)
        let timer = eventLoop.scheduleTask(deadline: deadline) { giveUp.fail(UpstreamError.timedOut) }
        return acquire(address, fresh: fresh, until: giveUp.futureResult).always { _ in
            timer.cancel()
            giveUp.succeed(())
        }.flatMap { connection in
            connection.send(request, deadline: deadline, bufferLimit: self.configuration.bufferedResponseLimit)
        }
    }

    /// An idle connection, a new one, or the next one released (failing when `giveUp` completes first).
    private func acquire(_ address: UpstreamAddress, fresh: Bool, until giveUp: EventLoopFuture<Void>) -> EventLoopFuture<UpstreamConnection> {
        if !fresh {
            while let connection = idle[address]?.popLast() {
                if connection.take() { return eventLoop.makeSucceededFuture(connection) }
            }
        }
        if closing { return eventLoop.makeFailedFuture(UpstreamError.connectFailed("the gateway is stopping")) }
        if open[address, default: 0] < configuration.maxConnectionsPerLoop {
            open[address, default: 0] += 1
            return connect(address)
        }
        let promise = eventLoop.makePromise(of: UpstreamConnection.self)
        waiting[address, default: []].append(promise)
        giveUp.whenFailure { error in promise.fail(error) }
        return promise.futureResult
    }

    private func connect(_ address: UpstreamAddress) -> EventLoopFuture<UpstreamConnection> {
        ClientBootstrap(group: eventLoop)
            .connectTimeout(configuration.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.autoRead, value: false)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // NIO's client handlers without its outbound header validator: every header sent here came
                    // through the server's parser already.
                    try channel.pipeline.syncOperations.addHandler(HTTPRequestEncoder())
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes)))
                    try channel.pipeline.syncOperations.addHandler(UpstreamHandler())
                }
            }
            .connect(host: address.host, port: address.port)
            .flatMapErrorThrowing { error in
                self.open[address, default: 1] -= 1
                self.wakeNextWaiter(address)
                throw UpstreamError.connectFailed(String(describing: error))
            }
            .flatMapThrowing { channel in
                let handler = try channel.pipeline.syncOperations.handler(type: UpstreamHandler.self)
                let connection = UpstreamConnection(channel: channel, handler: handler, pool: self, address: address)
                channel.closeFuture.whenComplete { _ in self.closed(connection) }
                _ = connection.take()
                return connection
            }
    }

    /// After a complete exchange on a connection that stays open: to the next waiter, or idle.
    func release(_ connection: UpstreamConnection) {
        eventLoop.preconditionInEventLoop()
        // A closed connection wakes the next waiter from `closed(_:)`.
        guard connection.channel.isActive else { return }
        if let waiter = waiting[connection.address]?.popFirst() {
            _ = connection.take()
            // A waiter that already gave up (its deadline passed) hands the connection back at once.
            waiter.futureResult.whenFailure { _ in connection.release() }
            waiter.succeed(connection)
            return
        }
        if closing { connection.channel.close(promise: nil); return }
        idle[connection.address, default: []].append(connection)
        connection.scheduleIdleClose(after: configuration.idleTimeout)
    }

    private func closed(_ connection: UpstreamConnection) {
        open[connection.address, default: 1] -= 1
        idle[connection.address]?.removeAll { $0 === connection }
        wakeNextWaiter(connection.address)
    }

    /// A connection slot came free: the oldest waiter gets a new connection.
    private func wakeNextWaiter(_ address: UpstreamAddress) {
        guard let waiter = waiting[address]?.popFirst() else { return }
        open[address, default: 0] += 1
        connect(address).cascade(to: waiter)
    }

    func closeAll() -> EventLoopFuture<Void> {
        eventLoop.flatSubmit {
            self.closing = true
            let connections = self.idle.values.flatMap { $0 }
            self.idle = [:]
            for waiters in self.waiting.values { for waiter in waiters { waiter.fail(UpstreamError.connectFailed("the gateway is stopping")) } }
            self.waiting = [:]
            return EventLoopFuture.andAllComplete(connections.map { $0.channel.close() }, on: self.eventLoop)
        }
    }
}

/// One keep-alive connection: idle in the pool, or carrying one exchange.
final class UpstreamConnection: @unchecked Sendable {
    let channel: any Channel
    let handler: UpstreamHandler
    let pool: LoopPool
    let address: UpstreamAddress
    private var busy = false
    private var served = 0
    private var idleClose: Scheduled<Void>?

    init(channel: any Channel, handler: UpstreamHandler, pool: LoopPool, address: UpstreamAddress) {
        self.channel = channel
        self.handler = handler
        self.pool = pool
        self.address = address
    }

    /// Marks the connection busy; false when it is closed or already taken.
    func take() -> Bool {
        guard channel.isActive, !busy else { return false }
        busy = true
        idleClose?.cancel()
        idleClose = nil
        return true
    }

    func release() {
        busy = false
        pool.release(self)
    }

    func scheduleIdleClose(after timeout: TimeAmount) {
        idleClose = channel.eventLoop.scheduleTask(in: timeout) { [channel] in channel.close(promise: nil) }
    }

    func send(_ request: UpstreamRequest, deadline: NIODeadline, bufferLimit: Int) -> EventLoopFuture<UpstreamResponse> {
        let promise = channel.eventLoop.makePromise(of: UpstreamResponse.self)
        let reused = served > 0
        served += 1
        handler.start(Exchange(promise: promise, bufferLimit: bufferLimit, reused: reused, isHead: request.head.method == .HEAD,
                               deadline: deadline) { [self] reusable in
            if reusable { release() } else { busy = false; channel.close(promise: nil) }
        })
        channel.write(HTTPClientRequestPart.head(request.head), promise: nil)
        if let body = request.body { channel.write(HTTPClientRequestPart.body(.byteBuffer(body)), promise: nil) }
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        channel.read()
        return promise.futureResult
    }
}

/// One request's answer in progress.
struct Exchange {
    let promise: EventLoopPromise<UpstreamResponse>
    let bufferLimit: Int
    let reused: Bool
    let isHead: Bool
    let deadline: NIODeadline
    /// Called once when the exchange is over: true when the connection can carry another.
    let finished: (Bool) -> Void
}

/// The body of an answer too long to hold, read from the upstream only as fast as its reader takes it. Lives on
/// the upstream connection's event loop (the client's: the pool is per loop); every call is made there.
public final class UpstreamBodyStream: @unchecked Sendable {
    private let eventLoop: any EventLoop
    private weak var handler: UpstreamHandler?
    private var onChunk: ((ByteBuffer) -> Void)?
    private var onEnd: (((any Error)?) -> Void)?
    /// What arrived before the reader started.
    private var early: [ByteBuffer] = []
    private var ended: (error: (any Error)?, done: Bool) = (nil, false)

    init(handler: UpstreamHandler, eventLoop: any EventLoop) {
        self.handler = handler
        self.eventLoop = eventLoop
    }

    /// Starts delivery: each chunk in order, then the end (nil, or what broke it).
    public func read(onChunk: @escaping (ByteBuffer) -> Void, onEnd: @escaping ((any Error)?) -> Void) {
        eventLoop.preconditionInEventLoop()
        self.onChunk = onChunk
        self.onEnd = onEnd
        for chunk in early { onChunk(chunk) }
        early = []
        if ended.done { finish(ended.error) }
    }

    /// No more reads from the upstream until `resume`.
    public func pause() { handler?.pause() }

    public func resume() { handler?.resume() }

    /// The reader is gone: the upstream connection, in the middle of an answer nobody reads, is closed.
    public func cancel() {
        onChunk = nil
        onEnd = nil
        handler?.consumerGone()
    }

    /// All of it, up to `limit` bytes (tests, and readers that want it whole after all).
    public func collect(limit: Int) -> EventLoopFuture<ByteBuffer> {
        let promise = eventLoop.makePromise(of: ByteBuffer.self)
        var whole = ByteBuffer()
        read(onChunk: { [self] chunk in
            var chunk = chunk
            if whole.readableBytes + chunk.readableBytes > limit {
                promise.fail(NIOTooManyBytesError(maxBytes: limit))
                cancel()
                return
            }
            whole.writeBuffer(&chunk)
        }, onEnd: { error in
            if let error { promise.fail(error) } else { promise.succeed(whole) }
        })
        return promise.futureResult
    }

    func deliver(_ chunk: ByteBuffer) {
        if let onChunk { onChunk(chunk) } else { early.append(chunk) }
    }

    func finish(_ error: (any Error)?) {
        guard let onEnd else {
            ended = (error, true)
            return
        }
        self.onChunk = nil
        self.onEnd = nil
        onEnd(error)
    }
}

/// Reads one answer at a time (reads are requested, never automatic, so a slow client slows the upstream).
final class UpstreamHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    private enum State {
        case idle
        case waitingForHead(Exchange)
        case buffering(Exchange, HTTPResponseHead, ByteBuffer?)
        case streaming(Exchange, HTTPResponseHead, UpstreamBodyStream)
    }

    private var state = State.idle
    private var context: ChannelHandlerContext?
    /// The stream's consumer wants more (or we are buffering): read again after each batch.
    private var wantsMore = true
    private var keepAlive = true
    private var deadline: Scheduled<Void>?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func start(_ exchange: Exchange) {
        state = .waitingForHead(exchange)
        wantsMore = true
        guard let context else { return }
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(deadline: exchange.deadline) { handler.value.timedOut() }
    }

    /// No complete answer (or no head of a streamed one) by the deadline: the connection is given up.
    private func timedOut() {
        deadline = nil
        guard let context else { return }
        switch state {
        case .waitingForHead, .buffering:
            fail(.timedOut, context: context)
            context.close(promise: nil)
        case .idle, .streaming:
            break
        }
    }

    private func cancelDeadline() {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch (unwrapInboundIn(data), state) {
        case (.head(let head), .waitingForHead(let exchange)):
            // 1xx answers (100 Continue) are not the answer.
            if head.status.code >= 100 && head.status.code < 200 && head.status.code != 101 { return }
            keepAlive = head.isKeepAlive
            let length = head.headers.first(name: "content-length").flatMap { Int($0) }
            if exchange.isHead || [204, 304].contains(head.status.code) || (length.map { $0 <= exchange.bufferLimit } ?? false) {
                state = .buffering(exchange, head, nil)
            } else {
                cancelDeadline()
                let stream = UpstreamBodyStream(handler: self, eventLoop: context.eventLoop)
                state = .streaming(exchange, head, stream)
                exchange.promise.succeed(UpstreamResponse(head: head, body: .stream(stream)))
            }
        case (.body(var chunk), .buffering(let exchange, let head, var body)):
            if body == nil { body = chunk } else { body!.writeBuffer(&chunk) }
            state = .buffering(exchange, head, body)
        case (.body(let chunk), .streaming(_, _, let stream)):
            stream.deliver(chunk)
        case (.end, .buffering(let exchange, let head, let body)):
            state = .idle
            cancelDeadline()
            exchange.promise.succeed(UpstreamResponse(head: head, body: .buffered(body ?? context.channel.allocator.buffer(capacity: 0))))
            exchange.finished(keepAlive)
        case (.end, .streaming(let exchange, _, let stream)):
            state = .idle
            exchange.finished(keepAlive)
            stream.finish(nil)
        default:
            fail(UpstreamError.brokenAnswer("unexpected part of an answer"), context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        switch state {
        case .waitingForHead, .buffering: context.read()
        case .streaming where wantsMore: context.read()
        default: break
        }
    }

    /// The reader's connection is full: no more reads until it drains.
    func pause() {
        if case .streaming = state { wantsMore = false }
    }

    func resume() {
        guard case .streaming = state, let context, !wantsMore else { return }
        wantsMore = true
        context.read()
    }

    /// The reader went away mid-stream: this connection is in the middle of an answer nobody reads.
    func consumerGone() {
        guard case .streaming(let exchange, _, _) = state, let context else { return }
        state = .idle
        exchange.finished(false)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        switch state {
        case .waitingForHead(let exchange):
            fail(UpstreamError.closedBeforeAnswer(reused: exchange.reused), context: context)
        case .buffering, .streaming:
            fail(UpstreamError.brokenAnswer("the connection closed part-way through the answer"), context: context)
        case .idle:
            break
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(UpstreamError.brokenAnswer(String(describing: error)), context: context)
        context.close(promise: nil)
    }

    private func fail(_ error: UpstreamError, context: ChannelHandlerContext) {
        cancelDeadline()
        let exchange: Exchange
        switch state {
        case .idle: return
        case .waitingForHead(let current), .buffering(let current, _, _):
            exchange = current
            current.promise.fail(error)
        case .streaming(let current, _, let stream):
            state = .idle
            current.finished(false)
            stream.finish(error)
            return
        }
        state = .idle
        exchange.finished(false)
    }
}
