import Foundation
import Synchronization

/// The open real-time connections this gateway instance holds, by user.
///
/// Each connection has a bounded outbox: when a client reads too slowly, its oldest undelivered frames are
/// dropped (the app catches up from the state frame on reconnect), so one slow phone never stalls anyone else.
final class RealtimeHub: Sendable {
    static let bufferPerConnection = 64

    private let connections = Mutex<[String: [UUID: AsyncStream<OutboundFrame>.Continuation]]>([:])
    /// Accounts deleted while their access tokens may still be valid: user → when that stops mattering.
    private let deleted = Mutex<[String: ContinuousClock.Instant]>([:])
    /// Longer than an access token lives (15 minutes), so no token of a deleted account opens a socket here.
    static let deletedMemory: Duration = .seconds(20 * 60)

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

    /// Ends every connection of `user` (the account was deleted: its sockets must not outlive it), and refuses
    /// new ones for as long as a token of the account could still be valid.
    func disconnectAll(user: String) {
        let now = ContinuousClock.now
        deleted.withLock { deleted in
            deleted = deleted.filter { $0.value > now }
            deleted[user] = now + Self.deletedMemory
        }
        let continuations = connections.withLock { $0.removeValue(forKey: user).map { Array($0.values) } ?? [] }
        for continuation in continuations { continuation.finish() }
    }

    func isDeleted(user: String) -> Bool {
        deleted.withLock { ($0[user] ?? .now) > .now }
    }

    var connectionCount: Int { connections.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}
