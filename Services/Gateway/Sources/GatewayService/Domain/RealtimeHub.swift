import Foundation
import LanternContracts
import LanternCore
import Synchronization

/// The open real-time connections this gateway instance holds, by user, each with the session its token belongs to.
///
/// Each connection has a bounded outbox: when a client reads too slowly, its oldest undelivered frames are
/// dropped (the app catches up from the state frame on reconnect), so one slow phone never stalls anyone else.
/// A connection the server ends gets the `session_ended` frame last, then its stream finishes (the socket closes).
final class RealtimeHub: Sendable {
    static let bufferPerConnection = 64

    private struct Connection {
        var session: String?
        var continuation: AsyncStream<OutboundFrame>.Continuation
    }

    private let connections = Mutex<[String: [UUID: Connection]]>([:])
    /// Accounts deleted and sessions ended while their access tokens may still be valid: id → when that stops mattering.
    private let endedUsers = Mutex<[String: ContinuousClock.Instant]>([:])
    private let endedSessions = Mutex<[String: ContinuousClock.Instant]>([:])
    /// Longer than an access token lives (15 minutes), so no token of a deleted account or an ended session opens a
    /// socket here.
    static let endedMemory: Duration = .seconds(20 * 60)

    init() {}

    /// Registers a connection of `user` opened with a token of `session`; frames for the user arrive on the stream.
    func connect(user: String, session: String?) -> (id: UUID, frames: AsyncStream<OutboundFrame>) {
        let (stream, continuation) = AsyncStream.makeStream(of: OutboundFrame.self, bufferingPolicy: .bufferingNewest(Self.bufferPerConnection))
        let id = UUID()
        connections.withLock { $0[user, default: [:]][id] = Connection(session: session?.lowercased(), continuation: continuation) }
        return (id, stream)
    }

    /// Forgets a connection that closed.
    func disconnect(user: String, id: UUID) {
        let connection = connections.withLock { all -> Connection? in
            let c = all[user]?.removeValue(forKey: id)
            if all[user]?.isEmpty == true { all[user] = nil }
            return c
        }
        connection?.continuation.finish()
    }

    /// Queues a frame on every connection of `user`; returns how many connections got it.
    @discardableResult
    func send(_ frame: OutboundFrame, to user: String) -> Int {
        let targets = connections.withLock { ($0[user] ?? [:]).values.map(\.continuation) }
        for continuation in targets { continuation.yield(frame) }
        return targets.count
    }

    /// Ends one connection (its token expired).
    func end(user: String, id: UUID, reason: String) {
        let connection = connections.withLock { all -> Connection? in
            let c = all[user]?.removeValue(forKey: id)
            if all[user]?.isEmpty == true { all[user] = nil }
            return c
        }
        if let connection { Self.end(connection, reason: reason) }
    }

    /// Ends every connection of `users` (the account was deleted: its sockets must not outlive it) and those opened
    /// with a token of `sessions` (logged out, revoked); refuses new ones for as long as such a token could be valid.
    /// Returns how many connections it ended.
    @discardableResult
    func end(users: [String], sessions: [String], reason: String) -> Int {
        let until = ContinuousClock.now + Self.endedMemory
        let users = Set(users.map { $0.lowercased() }), sessions = Set(sessions.map { $0.lowercased() })
        if !users.isEmpty { endedUsers.withLock { Self.remember(users, until: until, in: &$0) } }
        if !sessions.isEmpty { endedSessions.withLock { Self.remember(sessions, until: until, in: &$0) } }
        let ended = connections.withLock { all -> [Connection] in
            var ended: [Connection] = []
            for user in users { ended += all.removeValue(forKey: user).map { Array($0.values) } ?? [] }
            guard !sessions.isEmpty else { return ended }
            // Sessions are rare to end (a logout): a walk over this instance's connections is cheap enough.
            for (user, byID) in all {
                for (id, connection) in byID where connection.session.map(sessions.contains) == true {
                    ended.append(connection)
                    all[user]?.removeValue(forKey: id)
                }
                if all[user]?.isEmpty == true { all[user] = nil }
            }
            return ended
        }
        for connection in ended { Self.end(connection, reason: reason) }
        return ended.count
    }

    /// Why a token of `user` and `session` may not open a socket here, if so.
    enum Refusal: Sendable, Equatable {
        case accountDeleted
        case sessionEnded
    }

    func refusal(user: String, session: String?) -> Refusal? {
        let now = ContinuousClock.now
        if endedUsers.withLock({ ($0[user] ?? now) > now }) { return .accountDeleted }
        if let session = session?.lowercased(), endedSessions.withLock({ ($0[session] ?? now) > now }) { return .sessionEnded }
        return nil
    }

    var connectionCount: Int { connections.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    private static func remember(_ ids: Set<String>, until: ContinuousClock.Instant, in memory: inout [String: ContinuousClock.Instant]) {
        let now = ContinuousClock.now
        memory = memory.filter { $0.value > now }
        for id in ids { memory[id] = until }
    }

    private static func end(_ connection: Connection, reason: String) {
        connection.continuation.yield(OutboundFrame.sessionEnded(reason: reason))
        connection.continuation.finish()
    }
}
