import Hummingbird
import LanternCore
import Logging
import ServiceLifecycle
import Synchronization

/// The last word on a request caught by an outage, and what cancels the requests in flight when it begins.
///
/// Each request runs in a task of its own and is listed while it runs. One watcher per process (`watcher`, a
/// service the application runs) waits for a watched dependency to go down; then it cancels every request listed,
/// so that each gives up its wait (postgres-nio gives up a connection request when cancelled) and `OutageMiddleware`
/// answers it with the outage, logged and counted as usual. A handler can be stuck in a client that never gives up
/// (postgres-nio 1.33.2 can leave a query, sent as its connection closes, unanswered for ever): `grace` after the
/// outage began, the watcher answers whatever is still listed itself, and the stuck task is left behind; the
/// connection is free, and the process can stop.
///
/// While every watch is up, a request costs one task and its place in the list: the watcher's one wait is shared by
/// all of them (a race per request, against a waiter per request, cost five tasks each).
public struct OutageBackstop<Inner: HTTPResponder>: HTTPResponder where Inner.Context: RequestContext {
    public typealias Context = Inner.Context

    let inner: Inner
    let watches: [any DependencyWatch]
    let grace: Duration
    let inFlight = InFlightRequests()

    /// - Parameter grace: how long after the outage the router may still answer itself (with the same 503 through
    ///   its middleware, which logs and counts it); past it, the watcher answers.
    public init(_ inner: Inner, watches: [any DependencyWatch], grace: Duration = .seconds(2)) {
        self.inner = inner
        self.watches = watches
        self.grace = grace
    }

    /// What cancels and answers the requests in flight when an outage begins; the application runs it for as long
    /// as it serves (`ServiceBuilder.application` adds it). Without it, requests in flight wait for their clients.
    public var watcher: OutageWatcher { OutageWatcher(watches: watches, grace: grace, inFlight: inFlight) }

    public func respond(to request: Request, context: Context) async throws -> Response {
        guard !watches.isEmpty else { return try await inner.respond(to: request, context: context) }
        let answer = FirstAnswer()
        let inner = self.inner
        // Listed before its task starts: an outage the watcher sees from here on cancels it (at once if the task starts
        // after), and one that began before is refused by the router's own check at the door (`OutageMiddleware`).
        let id = inFlight.add(answer: answer, request: request, logger: context.logger)
        defer { inFlight.remove(id) }
        let handler = Task {
            do { answer.offer(.success(try await inner.respond(to: request, context: context))) } catch { answer.offer(.failure(error)) }
        }
        inFlight.attach(handler, to: id)
        return try await withTaskCancellationHandler {
            try await answer.value()
        } onCancel: {
            handler.cancel()
            answer.offer(.failure(CancellationError()))
        }
    }
}

/// The requests an `OutageBackstop` is answering, by a number of their own.
final class InFlightRequests: Sendable {
    struct Entry: Sendable {
        let answer: FirstAnswer
        let request: Request
        let logger: Logger
        /// Its task, once started.
        var handler: Task<Void, Never>?
        /// Cancelled by an outage: a task attached later is cancelled as it is attached.
        var cancelled = false
    }

    private let state = Mutex<(next: UInt64, entries: [UInt64: Entry])>((0, [:]))

    func add(answer: FirstAnswer, request: Request, logger: Logger) -> UInt64 {
        state.withLock { state in
            state.next &+= 1
            state.entries[state.next] = Entry(answer: answer, request: request, logger: logger)
            return state.next
        }
    }

    func attach(_ handler: Task<Void, Never>, to id: UInt64) {
        let cancelled = state.withLock { state -> Bool in
            state.entries[id]?.handler = handler
            return state.entries[id]?.cancelled == true
        }
        if cancelled { handler.cancel() }
    }

    func remove(_ id: UInt64) { state.withLock { _ = $0.entries.removeValue(forKey: id) } }

    /// Cancels every request listed (and marks them, for a task not attached yet); returns them.
    func cancelAll() -> [Entry] {
        let entries = state.withLock { state -> [Entry] in
            for id in state.entries.keys { state.entries[id]?.cancelled = true }
            return Array(state.entries.values)
        }
        for entry in entries { entry.handler?.cancel() }
        return entries
    }
}

/// Waits for an outage of any watch; when one begins, cancels every request in flight at once (their routers answer
/// them), and answers `grace` later those that are still waiting (a handler stuck in a client). Then it waits for
/// every watch to be up before it watches for the next outage.
public struct OutageWatcher: Service {
    let watches: [any DependencyWatch]
    let grace: Duration
    let inFlight: InFlightRequests

    public func run() async throws {
        guard !watches.isEmpty else { return try await gracefulShutdown() }
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await Self.waitUntilAnyDown(watches)
                guard !Task.isCancelled, let down = watches.first(where: \.isDown) else { continue }
                let caught = inFlight.cancelAll()
                try? await Task.sleep(for: grace)
                for entry in caught where entry.answer.offer(.success(Self.outageResponse(down.outageProblem, request: entry.request))) {
                    entry.logger.warning("request left behind: no answer after the outage", metadata: [
                        "method": "\(entry.request.method)", "path": "\(entry.request.uri.path)", "grace": "\(grace)",
                    ])
                }
                // Requests that arrive meanwhile are refused at the door; the next outage is one that begins after
                // every watch is up again.
                while !Task.isCancelled, watches.contains(where: \.isDown) { try? await Task.sleep(for: .milliseconds(100)) }
            }
        }
    }

    /// The problem as the router would have answered it; the caller's request id echoed, since `RequestIDMiddleware`
    /// (inside the router) never saw this answer.
    static func outageResponse(_ problem: Problem, request: Request) -> Response {
        var response = problem.response()
        if let id = request.headers[.requestID], RequestIDMiddleware.isSane(id) { response.headers[.requestID] = id }
        return response
    }

    /// Returns once any watch is down, or when cancelled.
    static func waitUntilAnyDown(_ watches: [any DependencyWatch]) async {
        await withTaskGroup(of: Void.self) { group in
            for watch in watches { group.addTask { await watch.waitUntilDown() } }
            await group.next()
            group.cancelAll()
        }
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
