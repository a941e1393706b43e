import PostgresNIO

public enum DatabaseErrors {
    /// An error as an operator reads it in a log line: PostgreSQL's own SQLSTATE and message (postgres-nio's
    /// description hides them on purpose, since it may reach a client), anything else as it describes itself.
    public static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        guard let server = error.serverInfo else { return "PostgreSQL \(error.code)" }
        return "PostgreSQL \(server[.sqlState] ?? "?"): \(server[.message] ?? "")\(server[.detail].map { " (\($0))" } ?? "")"
    }
}
