import Synchronization

/// Calls that wait until `release()`, whether cancelled or not: a client stuck on an answer that never comes.
public final class StuckCalls: Sendable {
    private let state = Mutex<(calls: Int, waiting: [CheckedContinuation<Void, Never>], released: Bool)>((0, [], false))

    public init() {}

    /// How many calls have started waiting.
    public var count: Int { state.withLock { $0.calls } }

    public func wait() async {
        await withCheckedContinuation { continuation in
            let released = state.withLock { state in
                state.calls += 1
                if !state.released { state.waiting.append(continuation) }
                return state.released
            }
            if released { continuation.resume() }
        }
    }

    /// Every call waiting now, and any made later, returns.
    public func release() {
        let waiting = state.withLock { state in
            state.released = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}
