import Logging
import NIOCore
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

extension PostgresClient {
    /// Runs a statement that returns no rows (a `DELETE`, an `UPDATE`) and answers how many rows it touched, from
    /// the command tag: a purge of a million rows sends the server's count, not a million `RETURNING` rows.
    public func rowsAffected(_ query: PostgresQuery, logger: Logger) async throws -> Int {
        try await withConnection { connection in
            let result: EventLoopFuture<PostgresQueryResult> = connection.query(query, logger: logger)
            return try await result.get().metadata.rows ?? 0
        }
    }
}
