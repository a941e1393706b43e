import Hummingbird
import LanternCore
import Logging
import Synchronization

/// The last word on a request caught by an outage.
///
/// `OutageMiddleware` answers a request in flight with the outage as soon as the dependency goes down, but from
/// inside the router: Swift's structured concurrency makes it wait for the handler it raced to end, and a handler can
/// be stuck in a client that never gives up (postgres-nio 1.33.2 can leave a query, sent as its connection closes,
/// unanswered for ever). This responder wraps the whole router and runs it in a task of its own, so that `grace`
/// after a watched dependency went down the client gets the outage's 503 even if the router has not answered. The
/// stuck task is cancelled and left behind; the connection is free, and the process can stop.
///
/// While every watch is up, the only cost is the task per request.
public struct OutageBackstop<Inner: HTTPResponder>: HTTPResponder where Inner.Context: RequestContext {
    public typealias Context = Inner.Context

    let inner: Inner
    let watches: [any DependencyWatch]
    let grace: Duration

    /// - Parameter grace: how long after the outage the router may still answer itself (with the same 503 through
    ///   its middleware, which logs and counts it); past it, this answers.
    public init(_ inner: Inner, watches: [any DependencyWatch], grace: Duration = .seconds(2)) {
        self.inner = inner
        self.watches = watches
        self.grace = grace
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        guard !watches.isEmpty else { return try await inner.respond(to: request, context: context) }
        let answer = FirstAnswer()
        let inner = self.inner
        let handler = Task {
            do { answer.offer(.success(try await inner.respond(to: request, context: context))) } catch { answer.offer(.failure(error)) }
        }
        let (watches, grace) = (self.watches, self.grace)
        let backstop = Task {
            await Self.waitUntilAnyDown(watches)
            try? await Task.sleep(for: grace)
            guard !Task.isCancelled, let down = watches.first(where: \.isDown) else { return }
            if answer.offer(.success(Self.outageResponse(down.outageProblem, request: request))) {
                handler.cancel()
                context.logger.warning("request left behind: no answer after the outage", metadata: [
                    "method": "\(request.method)", "path": "\(request.uri.path)", "grace": "\(grace)",
                ])
            }
        }
        defer { backstop.cancel() }
        return try await withTaskCancellationHandler {
            try await answer.value()
        } onCancel: {
            handler.cancel()
            answer.offer(.failure(CancellationError()))
        }
    }

    /// Returns once any watch is down, or when cancelled.
    static func waitUntilAnyDown(_ watches: [any DependencyWatch]) async {
        await withTaskGroup(of: Void.self) { group in
            for watch in watches { group.addTask { await watch.waitUntilDown() } }
            await group.next()
            group.cancelAll()
        }
    }

    /// The problem as the router would have answered it; the caller's request id echoed, since `RequestIDMiddleware`
    /// (inside the router) never saw this answer.
    static func outageResponse(_ problem: Problem, request: Request) -> Response {
        var response = problem.response()
        if let id = request.headers[.requestID], RequestIDMiddleware.isSane(id) { response.headers[.requestID] = id }
        return response
    }
}

/// The first of several results offered, for one waiter.
final class FirstAnswer: Sendable {
    private let state = Mutex<(result: Result<Response, any Error>?, waiter: CheckedContinuation<Response, any Error>?)>((nil, nil))

    /// Keeps `result` if none came before, and wakes the waiter; whether it was the first.
    @discardableResult
    func offer(_ result: Result<Response, any Error>) -> Bool {
        let (first, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Response, any Error>?) in
            guard state.result == nil else { return (false, nil) }
            state.result = result
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume(with: result)
        return first
    }

    func value() async throws -> Response {
        try await withCheckedThrowingContinuation { continuation in
            let result = state.withLock { state -> Result<Response, any Error>? in
                if state.result == nil { state.waiter = continuation }
                return state.result
            }
            if let result { continuation.resume(with: result) }
        }
    }
}
