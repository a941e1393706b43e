import Hummingbird
import LanternCore

/// Answers 503 (the watch's problem, with `Retry-After`) while a dependency the service cannot work without is down:
/// at once for a new request, and for a request in flight when the dependency goes down — `OutageBackstop`'s
/// watcher cancels it then, and whatever error its cancelled wait ends in is answered here as the outage (the
/// backstop answers a handler stuck in a client that ignores cancellation). `/health/live` stays outside it: a
/// process whose database is down is still alive.
public struct OutageMiddleware<Context: RequestContext>: RouterMiddleware {
    let watches: [any DependencyWatch]

    public init(watches: [any DependencyWatch]) { self.watches = watches }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !watches.isEmpty, !request.uri.path.hasPrefix("/health/") else {
            return try await next(request, context)
        }
        if let down = watches.first(where: \.isDown) { throw down.outageProblem }
        do {
            return try await next(request, context)
        } catch {
            for watch in watches { await watch.observe(error) }
            // The request failed because the dependency went down (or was cancelled because it did): the outage is
            // the answer.
            if let down = watches.first(where: \.isDown) { throw down.outageProblem }
            throw error
        }
    }
}
