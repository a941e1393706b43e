import Foundation
import Synchronization

/// The open real-time connections this gateway instance holds, by user.
///
/// Each connection has a bounded outbox: when a client reads too slowly, its oldest undelivered frames are
/// dropped (the app catches up from the state frame on reconnect), so one slow phone never stalls anyone else.
final class RealtimeHub: Sendable {
    static let bufferPerConnection = 64

    private let connections = Mutex<[String: [UUID: AsyncStream<OutboundFrame>.Continuation]]>([:])

    init() {}

    /// Registers a connection of `user`; frames for the user arrive on the returned stream.
    func connect(user: String) -> (id: UUID, frames: AsyncStream<OutboundFrame>) {
        let (stream, continuation) = AsyncStream.makeStream(of: OutboundFrame.self, bufferingPolicy: .bufferingNewest(Self.bufferPerConnection))
        let id = UUID()
        connections.withLock { $0[user, default: [:]][id] = continuation }
        return (id, stream)
    }

    func disconnect(user: String, id: UUID) {
        let continuation = connections.withLock { all -> AsyncStream<OutboundFrame>.Continuation? in
            let c = all[user]?.removeValue(forKey: id)
            if all[user]?.isEmpty == true { all[user] = nil }
            return c
        }
        continuation?.finish()
    }

    /// Queues a frame on every connection of `user`; returns how many connections got it.
    @discardableResult
    func send(_ frame: OutboundFrame, to user: String) -> Int {
        let targets = connections.withLock { Array(($0[user] ?? [:]).values) }
        for continuation in targets { continuation.yield(frame) }
        return targets.count
    }

    /// Ends every connection of `user` (the account was deleted: its sockets must not outlive it).
    func disconnectAll(user: String) {
        let continuations = connections.withLock { $0.removeValue(forKey: user).map { Array($0.values) } ?? [] }
        for continuation in continuations { continuation.finish() }
    }

    var connectionCount: Int { connections.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}
