import Foundation
import Synchronization

/// The open real-time connections this gateway instance holds, by user.
///
/// Each connection has a bounded outbox: when a client reads too slowly, its oldest undelivered frames are
/// dropped (the app catches up from the state frame on reconnect), so one slow phone never stalls anyone else.
public final class RealtimeHub: Sendable {
    public static let bufferPerConnection = 64

    private let connections = Mutex<[String: [UUID: AsyncStream<String>.Continuation]]>([:])

    public init() {}

    /// Registers a connection of `user`; frames for the user arrive on the returned stream.
    public func connect(user: String) -> (id: UUID, frames: AsyncStream<String>) {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(Self.bufferPerConnection))
        let id = UUID()
        connections.withLock { $0[user, default: [:]][id] = continuation }
        return (id, stream)
    }

    public func disconnect(user: String, id: UUID) {
        let continuation = connections.withLock { all -> AsyncStream<String>.Continuation? in
            let c = all[user]?.removeValue(forKey: id)
            if all[user]?.isEmpty == true { all[user] = nil }
            return c
        }
        continuation?.finish()
    }

    /// Queues a frame on every connection of `user`; returns how many connections got it.
    @discardableResult
    public func send(_ frame: String, to user: String) -> Int {
        let targets = connections.withLock { Array(($0[user] ?? [:]).values) }
        for continuation in targets { continuation.yield(frame) }
        return targets.count
    }

    /// Ends every connection of `user` (the account was deleted: its sockets must not outlive it).
    public func disconnectAll(user: String) {
        let continuations = connections.withLock { $0.removeValue(forKey: user).map { Array($0.values) } ?? [] }
        for continuation in continuations { continuation.finish() }
    }

    public var connectionCount: Int { connections.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}
