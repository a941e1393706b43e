import _ConnectionPoolModule
import LanternCore
import LanternDatabase
import LanternRedis
import PostgresNIO

/// Errors of a service's own dependencies that are an outage, not a bug: answered 503 with a stable code and
/// `Retry-After`, never 500 (`ProblemMiddleware`'s classifier for every service).
public enum DependencyErrors {
    public static let database = Problem.dependencyUnavailable("The database", code: "database_unavailable")
    public static let redis = Problem.dependencyUnavailable("The event bus", code: "redis_unavailable")

    /// An error as an operator reads it in a log line: PostgreSQL's own SQLSTATE and message (postgres-nio's
    /// description hides them on purpose, since it may reach a client), anything else as it describes itself.
    public static func describe(_ error: any Error) -> String { DatabaseErrors.describe(error) }

    public static func problem(for error: any Error) -> Problem? {
        switch error {
        case let error as PSQLError where [.connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown,
                                           .poolClosed].contains(error.code):
            return database
        case let error as ConnectionPoolError where error == .connectionCreationCircuitBreakerTripped || error == .poolShutdown:
            return database
        case RedisError.connection:
            return redis
        default:
            return nil
        }
    }
}
