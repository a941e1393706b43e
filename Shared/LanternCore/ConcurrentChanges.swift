/// A conditional write (decided on the version it read) lost to other writes of the same thing on every attempt:
/// 503 `busy` with `Retry-After`, since a second later it will go through. Services throw it from their domain;
/// the problem middleware answers it.
public struct ConcurrentChanges: ProblemConvertible, Sendable {
    /// What was changed, as the detail names it (`streak`, `pet`, `cookie`).
    public var subject: String
    public init(_ subject: String) { self.subject = subject }

    public var problem: Problem {
        Problem(status: 503, code: "busy", title: "Service Unavailable",
                detail: "Too many changes to this \(subject) at once; try again in a second.", retryAfter: 1)
    }

    /// How many times a decision is read and made again before the write gives up.
    public static let attempts = 24

    /// Optimistic writes, the way every domain here changes a row it read: `attempt` reads, decides and writes only
    /// if what it read is unchanged, returning nil when another write came first; it then runs again, after a short
    /// jittered pause (two devices that collided once do not collide again in step), reading what won.
    ///
    /// No lock is held while deciding, so a decision may take a model call or a computation without queueing other
    /// writers; a lost race costs one more read. Throws `ConcurrentChanges(subject)` when every attempt lost.
    public static func retrying<Value>(_ subject: String, attempts: Int = attempts,
                                       _ attempt: () async throws -> Value?) async throws -> Value {
        for number in 0..<max(1, attempts) {
            if number > 0 { try await Task.sleep(for: .microseconds(Int.random(in: 200...(1000 * min(number, 10))))) }
            if let value = try await attempt() { return value }
        }
        throw ConcurrentChanges(subject)
    }
}
