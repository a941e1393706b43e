import Synchronization

/// The operation did not finish in time.
public struct DeadlineExceeded: Error, Sendable, CustomStringConvertible {
    public init() {}
    public var description: String { "timed out" }
}

/// Runs `operation` and returns its result, or throws `DeadlineExceeded` as soon as `timeout` has passed,
/// cancelling the operation without waiting for it to wind down.
///
/// A task group would wait for its cancelled child to finish (an HTTP client may take tens of milliseconds to
/// tear down a request), which breaks a hard budget; here the operation runs in its own task and the caller
/// leaves on time. Cancelling the caller cancels the operation.
public func withDeadline<T: Sendable>(_ timeout: Duration, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    guard timeout > .zero else { throw DeadlineExceeded() }
    let race = DeadlineRace<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.start(continuation, timeout: timeout, operation)
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The shared state of one `withDeadline`: whoever finishes first resumes the caller, once.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var operation: Task<Void, Never>?
        var timer: Task<Void, Never>?
        var finished = false
    }
    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<T, any Error>, timeout: Duration, _ operation: @escaping @Sendable () async throws -> T) {
        let alreadyFinished = state.withLock { state in
            state.continuation = continuation
            return state.finished
        }
        // Cancelled before it started.
        if alreadyFinished { return finish(.failure(CancellationError())) }
        let work = Task { [self] in
            do { finish(.success(try await operation())) } catch { finish(.failure(error)) }
        }
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { finish(.failure(DeadlineExceeded())) }
        }
        let finished = state.withLock { state in
            state.operation = work
            state.timer = timer
            return state.finished
        }
        if finished {
            work.cancel()
            timer.cancel()
        }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, work, timer) = state.withLock { state in
            state.finished = true
            defer { state.continuation = nil }
            return (state.continuation, state.operation, state.timer)
        }
        guard let continuation else { return }
        timer?.cancel()
        if case .failure = result { work?.cancel() }
        continuation.resume(with: result)
    }
}
