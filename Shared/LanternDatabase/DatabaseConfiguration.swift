import Foundation
import LanternCore
import PostgresNIO

extension PostgresClient.Configuration {
    /// Builds a client configuration from a `postgres://user:password@host:port/database` URL (`DATABASE_URL`).
    ///
    /// `?sslmode=disable` (the default on loopback) or `require`; `?pool=N` makes the pool N connections, kept open.
    /// - Parameter applicationName: PostgreSQL's `application_name` for the connections (`pg_stat_activity`
    ///   shows who holds them; the pool gauge counts them by it).
    public static func lantern(url text: String, variable: String = "DATABASE_URL", applicationName: String? = nil) throws -> Self {
        guard let components = URLComponents(string: text),
              let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme),
              let host = components.host, !host.isEmpty,
              let user = components.user, !user.isEmpty
        else {
            throw ConfigurationError(variable: variable,
                                     message: "must look like postgres://user:password@host:5432/database, got '\(Settings.redacted(text))'")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        let query = Dictionary(components.queryItems?.map { ($0.name, $0.value ?? "") } ?? [], uniquingKeysWith: { $1 })
        let tls: TLS
        switch query["sslmode"] ?? "disable" {
        case "disable": tls = .disable
        case "prefer": tls = .prefer(.makeClientConfiguration())
        case "require": tls = .require(.makeClientConfiguration())
        case let other: throw ConfigurationError(variable: variable, message: "has unsupported sslmode '\(other)' (disable, prefer, require)")
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user,
            password: components.password?.removingPercentEncoding, database: database.isEmpty ? nil : database, tls: tls)
        if let pool = query["pool"] {
            guard let size = Int(pool), (1...500).contains(size) else {
                throw ConfigurationError(variable: variable, message: "has pool=\(pool); it must be 1...500")
            }
            // A fixed pool, as HikariCP recommends: all `size` connections opened at start and kept. Connections
            // above the minimum get an idle timer each time they come free (three tasks per query in postgres-nio
            // 1.33, cancelled at the next lease); without `pool` the pool grows on demand up to 20 and shrinks.
            configuration.options.maximumConnections = size
            configuration.options.minimumConnections = size
        }
        configuration.options.connectTimeout = .seconds(5)
        // Named prepared statements (the hot reads and writes, `PostgresPreparedStatement`) are key lookups whose best
        // plan never depends on the values: a generic plan, made once per connection, instead of PostgreSQL's default
        // of re-planning each execution while it weighs custom plans (a quarter of its time on the check-in path).
        // One-shot queries are planned per execution either way.
        configuration.options.additionalStartupParameters = [("plan_cache_mode", "force_generic_plan")]
        // Idle connections are kept alive by TCP (the server probes each after 60 s of silence, every 10 s, and
        // drops it after 3 unanswered), not by the pool's `SELECT 1`: the pool arms a keep-alive timer each time a
        // connection goes idle, three tasks per query, whether or not it ever fires. A connection a middlebox
        // dropped meanwhile fails its next query, which the database watch and the outage answers cover.
        configuration.options.keepAliveBehavior = nil
        configuration.options.additionalStartupParameters += [("tcp_keepalives_idle", "60"), ("tcp_keepalives_interval", "10"),
                                                              ("tcp_keepalives_count", "3")]
        if let applicationName { configuration.options.additionalStartupParameters.append(("application_name", applicationName)) }
        return configuration
    }
}
