import Synchronization

/// At most `limit` calls in flight to one provider; a caller waits for a slot only as long as its budget allows.
///
/// Slots are handed to waiters first in, first out. A waiter whose time runs out leaves the queue with `false`.
final class ConcurrencyLimit: Sendable {
    private struct State {
        var available: Int
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextID: UInt64 = 0
    }
    private let state: Mutex<State>
    let limit: Int

    init(limit: Int) {
        self.limit = limit
        state = Mutex(State(available: limit))
    }

    /// True with a slot (call `release()` after), false when none came within `timeout`.
    func acquire(timeout: Duration) async -> Bool {
        if state.withLock({ state in
            guard state.available > 0 else { return false }
            state.available -= 1
            return true
        }) { return true }
        guard timeout > .zero else { return false }
        return await withCheckedContinuation { continuation in
            let id: UInt64? = state.withLock { state in
                if state.available > 0 {
                    state.available -= 1
                    return nil
                }
                state.nextID += 1
                state.waiters.append((state.nextID, continuation))
                return state.nextID
            }
            guard let id else { return continuation.resume(returning: true) }
            Task {
                try? await Task.sleep(for: timeout)
                let expired = self.state.withLock { state -> CheckedContinuation<Bool, Never>? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index).continuation
                }
                expired?.resume(returning: false)
            }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if state.waiters.isEmpty {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        next?.resume(returning: true)
    }
}
