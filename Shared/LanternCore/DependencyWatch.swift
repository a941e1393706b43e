/// A dependency a service cannot answer without (its PostgreSQL), watched apart from the requests that use it, so
/// an outage is answered at once — 503 with `Retry-After` — instead of every request waiting out a connection pool.
public protocol DependencyWatch: Sendable {
    /// The last probe failed.
    var isDown: Bool { get }
    /// What a request gets while the dependency is down.
    var outageProblem: Problem { get }
    /// Returns once the dependency is (or goes) down; cancellable.
    func waitUntilDown() async
    /// A request failed with `error`: evidence the watch may act on at once.
    func observe(_ error: any Error) async
}

extension Problem {
    /// 503 for a dependency outage: a stable code per dependency and a `Retry-After`.
    public static func dependencyUnavailable(_ what: String, code: String, retryAfter: Int = 5) -> Problem {
        var problem = Problem(status: 503, code: code, title: "Service unavailable",
                              detail: "\(what) is unavailable for a moment; try again shortly.")
        problem.retryAfter = retryAfter
        return problem
    }
}
