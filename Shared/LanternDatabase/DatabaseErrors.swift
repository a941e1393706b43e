import PostgresNIO

public enum DatabaseErrors {
    /// An error as an operator reads it in a log line: PostgreSQL's own SQLSTATE and message (postgres-nio's
    /// description hides them on purpose, since it may reach a client), anything else as it describes itself.
    public static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        guard let server = error.serverInfo else { return "PostgreSQL \(error.code)" }
        return "PostgreSQL \(server[.sqlState] ?? "?"): \(server[.message] ?? "")\(server[.detail].map { " (\($0))" } ?? "")"
    }

    /// The unique constraint or index a statement would have broken (SQLSTATE 23505), else nil: a write that lets
    /// the database check uniqueness in the same statement tells its caller which rule refused it.
    public static func uniqueViolation(_ error: any Error) -> String? {
        guard let error = error as? PSQLError, let server = error.serverInfo, server[.sqlState] == "23505" else { return nil }
        return server[.constraintName]
    }

    /// The foreign key a statement would have broken (SQLSTATE 23503), else nil: a row that names a parent deleted
    /// meanwhile (a device of an account that was just deleted).
    public static func foreignKeyViolation(_ error: any Error) -> String? {
        guard let error = error as? PSQLError, let server = error.serverInfo, server[.sqlState] == "23503" else { return nil }
        return server[.constraintName] ?? ""
    }
}

/// The database did not do what a statement promises (a row an upsert returns is missing: a bug or a broken
/// database), reported as a 500.
public struct StoreInconsistency: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
