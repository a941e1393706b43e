import Logging
import NIOCore
import NIOPosix
import Synchronization

/// An async Redis client over hiredis: `size` connections, each used by one thread of a private thread pool.
///
/// hiredis calls block, so they run on this client's own `NIOThreadPool` rather than on NIO's event loops or
/// the Swift concurrency pool. A consumer doing `XREADGROUP … BLOCK` gets a client of its own (size 1) so a
/// blocked read never delays publishing.
public final class RedisClient: Sendable {
    public let endpoint: RedisEndpoint
    private let pool: NIOThreadPool
    private let idle: Mutex<[RedisConnection]>
    private let all: [RedisConnection]
    /// The event-loop lane (`send(_:on:)`).
    private let loops: RedisLoopConnections

    /// - Parameters:
    ///   - size: connections and threads; calls beyond that queue.
    ///   - commandTimeout: read timeout of each command; must exceed any `BLOCK` time used.
    ///   - connectTimeout: how long a (re)connect may take.
    public convenience init(endpoint: RedisEndpoint, size: Int = 4, commandTimeout: Duration = .seconds(5), connectTimeout: Duration = .seconds(2)) {
        self.init(endpoint: endpoint, size: size, commandTimeout: commandTimeout, connectTimeout: connectTimeout,
                  group: MultiThreadedEventLoopGroup.singleton)
    }

    /// - Parameter group: the event loops of the `send(_:on:)` lane, one connection each, made on first use.
    public init(endpoint: RedisEndpoint, size: Int, commandTimeout: Duration, connectTimeout: Duration, group: any EventLoopGroup) {
        precondition(size > 0)
        self.endpoint = endpoint
        self.loops = RedisLoopConnections(endpoint: endpoint, group: group, commandTimeout: commandTimeout, connectTimeout: connectTimeout)
        let connections = (0..<size).map { _ in RedisConnection(endpoint: endpoint, commandTimeout: commandTimeout, connectTimeout: connectTimeout) }
        self.all = connections
        self.idle = Mutex(connections)
        self.pool = NIOThreadPool(numberOfThreads: size)
        pool.start()
    }

    /// Sends a command, e.g. `["XADD", stream, "*", "event", json]`.
    @discardableResult
    public func send(_ arguments: [String]) async throws -> RedisValue {
        try await withCheckedThrowingContinuation { reply in send(arguments) { reply.resume(with: $0) } }
    }

    /// Sends a command on `eventLoop`'s own connection, pipelined, and completes there (`RedisLoopConnections`): for
    /// quick commands on a request's path, which the thread-pool lane would cost two thread hops each. Never for a
    /// blocking command: it would hold every command behind it.
    public func send(_ arguments: [String], on eventLoop: any EventLoop) -> EventLoopFuture<RedisValue> {
        loops.send(arguments, on: eventLoop)
    }

    /// Sends a command and calls `completion` with its reply on the client's thread: what the async form is made of.
    private func send(_ arguments: [String], completion: @escaping @Sendable (Result<RedisValue, any Error>) -> Void) {
        pool.submit { [self] state in
            guard case .active = state else {
                completion(.failure(RedisError.connection("the Redis client is shut down")))
                return
            }
            // The pool runs at most `size` jobs at once and each holds one connection, so one is always free.
            guard let connection = self.idle.withLock({ $0.popLast() }) else {
                completion(.failure(RedisError.connection("no idle connection")))
                return
            }
            let result = Result { try connection.send(arguments) }
            self.idle.withLock { $0.append(connection) }
            completion(result)
        }
    }

    @discardableResult
    public func send(_ arguments: String...) async throws -> RedisValue { try await send(arguments) }

    /// Sends `commands` in one round trip; replies (or error replies) come back in order.
    public func pipeline(_ commands: [[String]]) async throws -> [Result<RedisValue, RedisError>] {
        guard !commands.isEmpty else { return [] }
        return try await pool.runIfActive { [self] in
            guard let connection = self.idle.withLock({ $0.popLast() }) else {
                throw RedisError.connection("no idle connection")
            }
            defer { self.idle.withLock { $0.append(connection) } }
            return try connection.pipeline(commands)
        }
    }

    /// Closes connections and stops the threads. In-flight calls finish first.
    public func shutdown() async {
        await loops.close()
        try? await pool.shutdownGracefully()
        for connection in all { connection.close() }
    }
}
