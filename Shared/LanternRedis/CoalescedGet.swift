import NIOCore
import NIOPosix
import Synchronization

/// `GET` for many callers at once: the keys asked while one round trip is out go together in the next `MGET`.
///
/// Made for a key read on every request (the erased-account mark of each token): each `RedisClient` call is a hop
/// to its thread and back and a round trip, and under load dozens of requests ask at the same moment. A caller's
/// key is only ever sent in a round trip that leaves after it asked, so every answer is at least as new as the
/// question — nothing is cached. The first caller while none is out sends at once; the others wait, and when the
/// round trip is back the next one leaves with every key asked meanwhile (at most `batch`).
///
/// Round trips go on the event-loop lane of the client (`RedisClient.send(_:on:)`: no thread hop), and callbacks are
/// the mechanism (no task before the next round trip leaves); the async and event-loop forms are made of them.
public final class CoalescedGet: Sendable {
    public typealias Completion = @Sendable (Result<RedisValue, any Error>) -> Void

    private struct Waiter {
        let key: String
        let eventLoop: any EventLoop
        let completion: Completion
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
        try await withCheckedThrowingContinuation { reply in get(key, on: MultiThreadedEventLoopGroup.singleton.any()) { reply.resume(with: $0) } }
    }

    /// The same, completing on `eventLoop`.
    public func get(_ key: String, on eventLoop: any EventLoop) -> EventLoopFuture<RedisValue> {
        let promise = eventLoop.makePromise(of: RedisValue.self)
        get(key, on: eventLoop) { promise.completeWith($0) }
        return promise.futureResult
    }

    /// The same, calling `completion` on an event loop: `eventLoop`, or the loop of the caller whose round trip
    /// carried the key. A round trip goes out on its first caller's loop (`RedisClient.send(_:on:)`).
    public func get(_ key: String, on eventLoop: any EventLoop, completion: @escaping Completion) {
        let waiter = Waiter(key: key, eventLoop: eventLoop, completion: completion)
        let sendNow = state.withLock { state -> Bool in
            guard state.sending else {
                state.sending = true
                return true
            }
            state.waiting.append(waiter)
            return false
        }
        if sendNow { send(first: waiter) }
    }

    /// Sends `first` with the keys waiting, answers them all, then sends for the next waiters (or ends the turn).
    private func send(first: Waiter) {
        let round = state.withLock { state -> [Waiter] in
            let count = min(state.waiting.count, batch - 1)
            defer { state.waiting.removeFirst(count) }
            return [first] + state.waiting.prefix(count)
        }
        let command = round.count == 1 ? ["GET", first.key] : ["MGET"] + round.map(\.key)
        redis.send(command, on: first.eventLoop).whenComplete { [self] result in
            switch result {
            case .success(let reply) where round.count == 1:
                first.completion(.success(reply))
            case .success(let reply):
                // An error reply was thrown by `send`: these are values or nulls.
                if let values = reply.array, values.count == round.count {
                    for (waiter, value) in zip(round, values) { waiter.completion(.success(value)) }
                } else {
                    let error = RedisError.unexpectedReply("MGET of \(round.count) keys answered \(reply)")
                    for waiter in round { waiter.completion(.failure(error)) }
                }
            case .failure(let error):
                for waiter in round { waiter.completion(.failure(error)) }
            }
            passTurn()
        }
    }

    private func passTurn() {
        let next = state.withLock { state -> Waiter? in
            guard !state.waiting.isEmpty else {
                state.sending = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        if let next { send(first: next) }
    }
}
