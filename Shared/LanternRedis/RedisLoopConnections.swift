import CHiredis
import NIOCore
import NIOPosix

/// Redis over NIO: one connection per event loop, each command written on its caller's loop and pipelined behind
/// the ones still out, replies read by hiredis's own reader (`redisReader`) in order.
///
/// For the commands on every request's path (the erased-account mark, `CoalescedGet`): the thread-pool client
/// (`RedisClient.send`) hands each command to a thread and its reply back to the caller — two thread wake-ups and
/// a blocking round trip per command, which under load cost a proxied request more than the rest of its Redis work.
/// Here the command leaves in the same event-loop turn and its reply arrives with the loop's other reads. Blocking
/// commands (`XREADGROUP … BLOCK`) and everything else keep the thread-pool client.
///
/// A connection that breaks or keeps a reply waiting past `commandTimeout` fails every command still out with
/// `RedisError.connection` (callers such as `ErasedAccounts` then fail open) and is made again by the next command.
final class RedisLoopConnections: Sendable {
    private let connections: [ObjectIdentifier: RedisLoopConnection]
    private let group: any EventLoopGroup

    init(endpoint: RedisEndpoint, group: any EventLoopGroup, commandTimeout: Duration, connectTimeout: Duration) {
        self.group = group
        var connections: [ObjectIdentifier: RedisLoopConnection] = [:]
        for loop in group.makeIterator() {
            connections[ObjectIdentifier(loop)] = RedisLoopConnection(eventLoop: loop, endpoint: endpoint, commandTimeout: commandTimeout,
                                                                      connectTimeout: connectTimeout)
        }
        self.connections = connections
    }

    /// Sends `arguments` on `eventLoop`'s connection (another loop's, hopping there, when it is not one of the group's).
    func send(_ arguments: [String], on eventLoop: any EventLoop) -> EventLoopFuture<RedisValue> {
        let connection = connections[ObjectIdentifier(eventLoop)] ?? connections[ObjectIdentifier(group.next())]
        guard let connection else { return eventLoop.makeFailedFuture(RedisError.connection("no event loop")) }
        if connection.eventLoop.inEventLoop { return connection.send(arguments) }
        return connection.eventLoop.flatSubmit { connection.send(arguments) }.hop(to: eventLoop)
    }

    func close() async {
        for connection in connections.values { try? await connection.eventLoop.flatSubmit { connection.close() }.get() }
    }
}

/// One event loop's connection. Touched only on that loop.
final class RedisLoopConnection: @unchecked Sendable {
    let eventLoop: any EventLoop
    private let endpoint: RedisEndpoint
    private let commandTimeout: TimeAmount
    private let connectTimeout: TimeAmount
    private var channel: EventLoopFuture<any Channel>?
    private var handler: RedisReplyHandler?
    private var closed = false

    init(eventLoop: any EventLoop, endpoint: RedisEndpoint, commandTimeout: Duration, connectTimeout: Duration) {
        self.eventLoop = eventLoop
        self.endpoint = endpoint
        self.commandTimeout = .nanoseconds(Int64(commandTimeout.components.seconds) * 1_000_000_000 + commandTimeout.components.attoseconds / 1_000_000_000)
        self.connectTimeout = .nanoseconds(Int64(connectTimeout.components.seconds) * 1_000_000_000 + connectTimeout.components.attoseconds / 1_000_000_000)
    }

    func send(_ arguments: [String]) -> EventLoopFuture<RedisValue> {
        eventLoop.preconditionInEventLoop()
        guard !closed else { return eventLoop.makeFailedFuture(RedisError.connection("the Redis client is shut down")) }
        let promise = eventLoop.makePromise(of: RedisValue.self)
        let command = RedisLoopConnection.encode(arguments)
        if let handler, let channel = handler.channel, channel.isActive {
            handler.enqueue(promise, command: command, flush: true)
        } else {
            connect().whenComplete { result in
                switch result {
                case .success(let handler): handler.enqueue(promise, command: command, flush: true)
                case .failure(let error): promise.fail(error)
                }
            }
        }
        return promise.futureResult
    }

    /// The connection being made or made; signed in (`AUTH`) and on its database (`SELECT`) before any command, as
    /// those go first on the wire.
    private func connect() -> EventLoopFuture<RedisReplyHandler> {
        if let channel, let handler { return channel.map { _ in handler } }
        let endpoint = self.endpoint
        let handler = RedisReplyHandler(commandTimeout: commandTimeout)
        let made = ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.socketOption(.so_keepalive), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(handler) }
            }
            .connect(host: endpoint.host, port: endpoint.port)
            .flatMapErrorThrowing { error in
                throw RedisError.connection("\(endpoint.host):\(endpoint.port): \(error)")
            }
        self.channel = made
        self.handler = handler
        made.whenComplete { [self] result in
            switch result {
            case .success(let channel):
                if let password = endpoint.password {
                    handler.enqueue(eventLoop.makePromise(), command: Self.encode(["AUTH"] + (endpoint.user.map { [$0] } ?? []) + [password]),
                                    flush: false, closeOnError: true)
                }
                if endpoint.database != 0 {
                    handler.enqueue(eventLoop.makePromise(), command: Self.encode(["SELECT", String(endpoint.database)]), flush: false,
                                    closeOnError: true)
                }
                channel.closeFuture.whenComplete { _ in self.forget(handler) }
            case .failure:
                forget(handler)
            }
        }
        return made.map { _ in handler }
    }

    /// The connection went away: the next command makes a new one.
    private func forget(_ gone: RedisReplyHandler) {
        guard handler === gone else { return }
        handler = nil
        channel = nil
    }

    func close() -> EventLoopFuture<Void> {
        closed = true
        guard let channel else { return eventLoop.makeSucceededVoidFuture() }
        return channel.flatMap { $0.close() }.recover { _ in }
    }

    /// The command in RESP, as hiredis writes it.
    static func encode(_ arguments: [String]) -> ByteBuffer {
        RedisConnection.withArgv(arguments) { argc, argv, lengths in
            var target: UnsafeMutablePointer<CChar>?
            let length = redisFormatCommandArgv(&target, argc, argv, lengths)
            defer { redisFreeCommand(target) }
            guard length > 0, let target else { return ByteBuffer() }
            return ByteBuffer(bytes: UnsafeRawBufferPointer(start: target, count: Int(length)))
        }
    }
}

/// Replies in order to the commands written, read by hiredis's reader; every command still out fails when the
/// connection breaks or the oldest has waited past the command timeout. Touched only on its channel's loop (its
/// `RedisLoopConnection` hands it around in that loop's callbacks).
final class RedisReplyHandler: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private struct Pending {
        let promise: EventLoopPromise<RedisValue>
        let sent: NIODeadline
        /// A sign-in step: its error reply closes the connection.
        let closeOnError: Bool
    }

    let commandTimeout: TimeAmount
    private var pending = CircularBuffer<Pending>()
    private var reader: UnsafeMutablePointer<redisReader>?
    private var timer: Scheduled<Void>?
    private(set) var channel: (any Channel)?
    private var context: ChannelHandlerContext?

    init(commandTimeout: TimeAmount) { self.commandTimeout = commandTimeout }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        channel = context.channel
        reader = redisReaderCreate()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        failAll(RedisError.connection("the connection closed"))
        if let reader { redisReaderFree(reader) }
        reader = nil
        self.context = nil
    }

    func enqueue(_ promise: EventLoopPromise<RedisValue>, command: ByteBuffer, flush: Bool, closeOnError: Bool = false) {
        guard let context, context.channel.isActive else {
            promise.fail(RedisError.connection("the connection closed"))
            return
        }
        pending.append(Pending(promise: promise, sent: .now(), closeOnError: closeOnError))
        if timer == nil { armTimer(context: context, deadline: .now() + commandTimeout) }
        if flush {
            context.writeAndFlush(wrapOutboundOut(command), promise: nil)
        } else {
            context.write(wrapOutboundOut(command), promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        guard let reader else { return }
        let fed = bytes.withUnsafeReadableBytes { raw in
            redisReaderFeed(reader, raw.baseAddress?.assumingMemoryBound(to: CChar.self), raw.count)
        }
        guard fed == REDIS_OK else { return broken("unreadable reply", context: context) }
        while true {
            var reply: UnsafeMutableRawPointer?
            guard redisReaderGetReply(reader, &reply) == REDIS_OK else { return broken("unreadable reply", context: context) }
            guard let reply else { break }
            let value = RedisConnection.decode(reply.assumingMemoryBound(to: redisReply.self))
            freeReplyObject(reply)
            guard let next = pending.popFirst() else { return broken("a reply to no command", context: context) }
            if case .error(let message) = value {
                next.promise.fail(RedisError.server(message))
                if next.closeOnError { return broken("signing in: \(message)", context: context) }
            } else {
                next.promise.succeed(value)
            }
        }
        if pending.isEmpty {
            timer?.cancel()
            timer = nil
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(RedisError.connection("the connection closed"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        broken("\(error)", context: context)
    }

    /// Checks the oldest command when its time is up; a reply still missing then gives the connection up.
    private func armTimer(context: ChannelHandlerContext, deadline: NIODeadline) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = bound.value
            handler.timer = nil
            guard let oldest = handler.pending.first else { return }
            if oldest.sent + handler.commandTimeout <= .now() {
                handler.broken("no reply within \(handler.commandTimeout.nanoseconds / 1_000_000) ms", context: context)
            } else {
                handler.armTimer(context: context, deadline: oldest.sent + handler.commandTimeout)
            }
        }
    }

    private func broken(_ reason: String, context: ChannelHandlerContext) {
        failAll(RedisError.connection(reason))
        context.close(promise: nil)
    }

    private func failAll(_ error: RedisError) {
        timer?.cancel()
        timer = nil
        while let next = pending.popFirst() { next.promise.fail(error) }
    }
}
