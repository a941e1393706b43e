import Logging
import PostgresNIO

extension PostgresClient {
    /// `withTransaction`, but an error thrown by `body` comes out as itself (postgres-nio wraps it in
    /// `PostgresTransactionError`), so domain errors like "code expired" keep their type across the transaction.
    public func transaction<Result>(
        logger: Logger,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        do {
            return try await withTransaction(logger: logger, isolation: isolation, body)
        } catch let error as PostgresTransactionError {
            if let closureError = error.closureError, error.rollbackError == nil { throw closureError }
            throw error
        }
    }
}
