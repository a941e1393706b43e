import Hummingbird
import LanternCore

/// Answers 503 (the watch's problem, with `Retry-After`) while a dependency the service cannot work without is down:
/// at once for a new request, and for a request in flight as soon as the dependency goes down (it would otherwise
/// wait for its connection pool to give up). `/health/live` stays outside it: a process whose database is down is
/// still alive. A handler stuck in a client that ignores cancellation holds this middleware's answer back; the
/// `OutageBackstop` around the router answers for it.
public struct OutageMiddleware<Context: RequestContext>: RouterMiddleware {
    let watches: [any DependencyWatch]

    public init(watches: [any DependencyWatch]) { self.watches = watches }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !watches.isEmpty, !request.uri.path.hasPrefix("/health/") else {
            return try await next(request, context)
        }
        if let down = watches.first(where: \.isDown) { throw down.outageProblem }
        // The request runs as a child next to one waiting for an outage; whichever ends first answers, and the
        // other is cancelled (postgres-nio gives up a connection request when cancelled). `next` may not escape
        // this call: the group is awaited to its end before it returns, and `next` runs in one task only.
        return try await withoutActuallyEscaping(next) { next in
            let work = UncheckedSendable(next)
            let watches = self.watches
            return try await withThrowingTaskGroup(of: Response.self) { group in
                group.addTask { try await work.value(request, context) }
                for watch in watches {
                    group.addTask {
                        await watch.waitUntilDown()
                        throw Task.isCancelled ? CancellationError() : watch.outageProblem
                    }
                }
                defer { group.cancelAll() }
                do {
                    guard let response = try await group.next() else { throw CancellationError() }
                    return response
                } catch {
                    for watch in watches { await watch.observe(error) }
                    // The request failed because the dependency went down: the outage is the answer.
                    if let down = watches.first(where: \.isDown) { throw down.outageProblem }
                    throw error
                }
            }
        }
    }
}

/// A value moved into a child task that the caller keeps to itself (see `OutageMiddleware`).
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
