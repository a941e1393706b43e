import LanternCore
import LanternDatabase
import LanternEvents
import LanternHTTP
import LanternRedis
import Logging
import PostgresNIO
import ServiceLifecycle

/// What every service with a schema and events is built on: its PostgreSQL client, a Redis client, its outbox
/// and relay, housekeeping, readiness checks, and migrations that open the gate the relay waits on.
///
/// A service's `build…Application` creates one, adds its own routes and consumers, and hands `services` to the
/// `Application`.
public struct ServiceBackbone: Sendable {
    public let schema: String
    public let logger: Logger
    public let postgres: PostgresClient
    public let redisEndpoint: RedisEndpoint
    public let redis: RedisClient
    public let streams: StreamNames
    public let outbox: Outbox
    /// Opens once the schema's migrations are applied.
    public let migrated = StartupGate()

    public init(schema: String, databaseURL: String, redisURL: String, streamPrefix: String, logger: Logger) throws {
        self.schema = schema
        self.logger = logger
        self.postgres = PostgresClient(configuration: try .lantern(url: databaseURL), backgroundLogger: logger)
        self.redisEndpoint = try RedisEndpoint(url: redisURL)
        self.redis = RedisClient(endpoint: redisEndpoint, size: 2)
        self.streams = StreamNames(prefix: streamPrefix)
        self.outbox = Outbox(schema: schema, streams: streams)
    }

    /// `/health/ready` checks PostgreSQL and Redis.
    public var readiness: ReadinessChecks {
        var checks = ReadinessChecks()
        checks.addPostgres(postgres)
        checks.addRedis(redis)
        return checks
    }

    /// The background services, in start order: database client, Redis, outbox relay (after migrations), housekeeping.
    /// `relay: false` for a service that never writes events (a worker), so nothing polls an empty outbox.
    public func services(clock: WallClock, housekeeping: [Housekeeping.Rule], relay: Bool = true) -> [any Service] {
        var services: [any Service] = [postgres, RedisLifecycle(client: redis)]
        if relay {
            services.append(OutboxRelay(outbox: outbox, client: postgres, publisher: EventPublisher(redis: redis), logger: logger, startAfter: migrated))
        }
        services.append(Housekeeping(client: postgres, rules: housekeeping, clock: clock, logger: logger))
        return services
    }

    /// Applies the event tables and `migrations` to the schema, then opens `migrated`.
    public func migrate(_ migrations: [Migration]) async throws {
        try await Migrator.migrate(schema: schema, migrations: EventMigrations.all + migrations, client: postgres, logger: logger)
        migrated.open()
    }
}
