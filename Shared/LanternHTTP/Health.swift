import Foundation
import Hummingbird
import Synchronization

/// Named checks behind `/health/ready`: the process is ready when every dependency answers in time.
public struct ReadinessChecks: Sendable {
    public typealias Check = @Sendable () async throws -> Void
    var checks: [(name: String, run: Check)] = []

    public init() {}

    public mutating func add(_ name: String, _ check: @escaping Check) { checks.append((name, check)) }

    public struct Report: Codable, Sendable {
        public var status: String
        public var checks: [String: String]
    }

    /// Runs all checks concurrently, each bounded by `timeout`.
    public func run(timeout: Duration = .seconds(2)) async -> Report {
        let results = await withTaskGroup(of: (String, String).self) { group in
            for check in checks {
                group.addTask {
                    do {
                        try await withTimeout(timeout) { try await check.run() }
                        return (check.name, "ok")
                    } catch {
                        return (check.name, "failing: \(error)")
                    }
                }
            }
            var results: [String: String] = [:]
            for await (name, result) in group { results[name] = result }
            return results
        }
        return Report(status: results.values.allSatisfy { $0 == "ok" } ? "ok" : "unavailable", checks: results)
    }
}

public struct TimeoutError: Error, CustomStringConvertible {
    public var description: String { "timed out" }
}

/// Runs `body`, throwing `TimeoutError` if it takes longer than `timeout`.
///
/// Returns at the deadline even when `body` cannot be interrupted (a blocking hiredis call): the late result is
/// dropped. A task group would wait for its child, which is exactly what must not happen on a request path.
public func withTimeout<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let once = ResumeOnce<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            once.install(continuation)
            let work = Task {
                do { once.resume(.success(try await body())) } catch { once.resume(.failure(error)) }
            }
            Task {
                try? await Task.sleep(for: timeout)
                if once.resume(.failure(TimeoutError())) { work.cancel() }
            }
        }
    } onCancel: {
        once.resume(.failure(CancellationError()))
    }
}

/// A continuation resumed by whichever result comes first.
final class ResumeOnce<T: Sendable>: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<T, any Error>?, early: Result<T, any Error>?, done: Bool)>((nil, nil, false))

    func install(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { s -> Result<T, any Error>? in
            if let early = s.early { s.early = nil; return early }
            s.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    @discardableResult
    func resume(_ result: Result<T, any Error>) -> Bool {
        let continuation = state.withLock { s -> CheckedContinuation<T, any Error>?? in
            if s.done { return nil }
            s.done = true
            guard let c = s.continuation else { s.early = result; return .some(nil) }
            s.continuation = nil
            return .some(c)
        }
        guard let continuation else { return false }
        continuation?.resume(with: result)
        return true
    }
}
