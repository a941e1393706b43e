import Synchronization

/// `GET` for many callers at once: the keys asked while one round trip is out go together in the next `MGET`.
///
/// Made for a key read on every request (the erased-account mark of each token): each `RedisClient` call is a hop
/// to its thread and back and a round trip, and under load dozens of requests ask at the same moment. A caller's
/// key is only ever sent in a round trip that leaves after it asked, so every answer is at least as new as the
/// question — nothing is cached. The first caller while none is out sends at once; the others wait, and when the
/// round trip is back the first of them sends the next one, with every key asked meanwhile (at most `batch`).
public final class CoalescedGet: Sendable {
    private enum Turn {
        case answered(RedisValue)
        case send
    }

    private struct Waiter {
        let key: String
        let turn: CheckedContinuation<Turn, any Error>
    }

    private let redis: RedisClient
    private let batch: Int
    private let state = Mutex<(sending: Bool, waiting: [Waiter])>((false, []))

    public init(redis: RedisClient, batch: Int = 256) {
        precondition(batch > 0)
        self.redis = redis
        self.batch = batch
    }

    /// The value of `key` (`.bulk`) or `.null`, read after this call began.
    public func get(_ key: String) async throws -> RedisValue {
        let turn = try await withCheckedThrowingContinuation { (turn: CheckedContinuation<Turn, any Error>) in
            let sendNow = state.withLock { state -> Bool in
                guard state.sending else {
                    state.sending = true
                    return true
                }
                state.waiting.append(Waiter(key: key, turn: turn))
                return false
            }
            if sendNow { turn.resume(returning: .send) }
        }
        if case .answered(let value) = turn { return value }
        return try await send(key)
    }

    /// Sends `key` with the keys waiting, answers them, then gives the turn to the next waiter (or ends it).
    private func send(_ key: String) async throws -> RedisValue {
        let riders = state.withLock { state -> [Waiter] in
            let count = min(state.waiting.count, batch - 1)
            defer { state.waiting.removeFirst(count) }
            return Array(state.waiting.prefix(count))
        }
        defer { passTurn() }
        let values: [RedisValue]
        do {
            if riders.isEmpty {
                values = [try await redis.send(["GET", key])]
            } else {
                let reply = try await redis.send(["MGET", key] + riders.map(\.key))
                guard let array = reply.array, array.count == riders.count + 1 else {
                    throw RedisError.unexpectedReply("MGET of \(riders.count + 1) keys answered \(reply)")
                }
                values = array
            }
        } catch {
            for rider in riders { rider.turn.resume(throwing: error) }
            throw error
        }
        // An error reply was thrown by `send` above: these are values or nulls.
        for (rider, value) in zip(riders, values.dropFirst()) { rider.turn.resume(returning: .answered(value)) }
        return values[0]
    }

    private func passTurn() {
        let next = state.withLock { state -> Waiter? in
            guard !state.waiting.isEmpty else {
                state.sending = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.turn.resume(returning: .send)
    }
}
