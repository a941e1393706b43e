import Foundation
import Hummingbird
import HummingbirdCore
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import LanternHTTP
import LanternRedis
import Logging
import PostgresNIO
import ServiceLifecycle

/// Assembles one Lantern process from the parts it needs: a PostgreSQL schema, Redis, an outbox, stream
/// consumers, housekeeping and background services, each optional. Every service's `build…Application` starts
/// from one, so they all start, become ready and stop the same way.
///
/// Order is built in rather than left to each service: migrations run before the server accepts requests, and
/// the outbox relay and every consumer wait on `migrated`, which opens once they are applied (at once for a
/// process without a database). `/health/ready` checks each part that was added.
public struct ServiceBuilder: Sendable {
    /// The service's name: the envelopes' `producer`, its consumer groups, its server name.
    public let name: String
    public let process: ProcessSettings
    public let logger: Logger
    public let clock: WallClock
    public let streams: StreamNames
    /// Opens once the schema's migrations are applied; consumers and the outbox relay start after it.
    public let migrated = StartupGate()

    public private(set) var postgres: PostgresClient?
    public private(set) var schema: String?
    public private(set) var redisEndpoint: RedisEndpoint?
    public private(set) var redis: RedisClient?
    public private(set) var outbox: Outbox?
    public private(set) var readiness = ReadinessChecks()
    /// Dependencies whose outage is answered with 503 at once (the database).
    var watches: [any DependencyWatch] = []

    private var migrations: [Migration] = []
    private var housekeeping: [Housekeeping.Rule] = []
    private var clients: [any Service] = []
    private var background: [any Service] = []
    private var startup: [@Sendable () async throws -> Void] = []

    /// - Parameters:
    ///   - streamPrefix: `STREAM_PREFIX` (`lantern`; tests give each run its own).
    ///   - logger: tests pass theirs; otherwise the process logger at `LOG_LEVEL`.
    public init(_ name: String, process: ProcessSettings, streamPrefix: String = "lantern", clock: WallClock = .system, logger: Logger? = nil) {
        self.name = name
        self.process = process
        self.logger = process.logger(logger)
        self.clock = clock
        self.streams = StreamNames(prefix: streamPrefix)
    }

    /// The service's own schema, migrated from `migrations` (its bundled `Migrations/` folder) before start.
    @discardableResult
    public mutating func addDatabase(url: String, schema: String, migrations folder: URL?) throws -> PostgresClient {
        let client = PostgresClient(configuration: try .lantern(url: url), backgroundLogger: logger)
        postgres = client
        self.schema = schema
        migrations += try folder.map(Migration.load(from:)) ?? []
        clients.append(client)
        readiness.add("postgres") { try await client.query("SELECT 1") }
        let watch = DatabaseWatch(configuration: try .lantern(url: url), logger: logger)
        watches.append(watch)
        background.append(watch)
        return client
    }

    /// A pooled Redis client for commands (consumers open their own connections to the same endpoint).
    @discardableResult
    public mutating func addRedis(url: String, size: Int = 2, commandTimeout: Duration = .seconds(5), connectTimeout: Duration = .seconds(2)) throws -> RedisClient {
        let endpoint = try RedisEndpoint(url: url)
        let client = RedisClient(endpoint: endpoint, size: size, commandTimeout: commandTimeout, connectTimeout: connectTimeout)
        redisEndpoint = endpoint
        redis = client
        clients.append(RedisLifecycle(client: client))
        readiness.add("redis") { try await client.send("PING") }
        return client
    }

    /// The transactional outbox of the schema and its relay to Redis; needs `addDatabase` and `addRedis` first.
    /// Adds the event tables (`outbox`, `processed_events`) to the schema.
    public mutating func addOutbox() -> Outbox {
        guard let postgres, let schema, let redis else { preconditionFailure("addOutbox needs addDatabase and addRedis first") }
        let outbox = Outbox(schema: schema, streams: streams, producer: name)
        self.outbox = outbox
        migrations = EventMigrations.all + migrations
        background.append(OutboxRelay(outbox: outbox, client: postgres, publisher: EventPublisher(redis: redis), logger: logger, startAfter: migrated))
        return outbox
    }

    /// Consumes `stream` as a member of the group `group` (default: the service's name) with typed handlers.
    public mutating func consume(_ stream: EventStream, group: String? = nil, handlers: EventHandlers) {
        guard let redisEndpoint else { preconditionFailure("consume needs addRedis first") }
        background.append(StreamConsumer(endpoint: redisEndpoint, streams: streams, options: consumerOptions(stream, group: group),
                                         logger: logger, startAfter: migrated, handlers: handlers))
    }

    /// Consumes `stream` a batch at a time (a worker that saves round trips by batching).
    public mutating func consume(_ stream: EventStream, group: String? = nil, batchSize: Int,
                                 batchHandler: @escaping StreamConsumer.BatchHandler) {
        guard let redisEndpoint else { preconditionFailure("consume needs addRedis first") }
        var options = consumerOptions(stream, group: group)
        options.batchSize = batchSize
        background.append(StreamConsumer(endpoint: redisEndpoint, streams: streams, options: options, logger: logger,
                                         startAfter: migrated, batchHandler: batchHandler))
    }

    /// Each instance is one consumer of the group, named after its host and process.
    private func consumerOptions(_ stream: EventStream, group: String?) -> StreamConsumer.Options {
        StreamConsumer.Options(stream: streams.name(of: stream), group: group ?? name,
                               consumer: ProcessInfo.processInfo.hostName + "-\(ProcessInfo.processInfo.processIdentifier)")
    }

    /// Hourly deletion of rows past their age (needs `addDatabase`).
    public mutating func addHousekeeping(_ rules: [Housekeeping.Rule]) {
        housekeeping += rules
    }

    /// A background service that runs as long as the process, started after the clients it may use and, like
    /// every consumer, only once the migrations are applied (a loop over the service's tables needs them).
    public mutating func addService(_ service: any Service) {
        background.append(AfterMigrations(gate: migrated, service: service))
    }

    /// A named check of `/health/ready`.
    public mutating func addReadiness(_ name: String, _ check: @escaping ReadinessChecks.Check) {
        readiness.add(name, check)
    }

    /// Work before the server accepts requests, after the migrations (keys to load, an index to build).
    public mutating func beforeServerStarts(_ work: @escaping @Sendable () async throws -> Void) {
        startup.append(work)
    }

    /// The router every service starts from: request ids, problem+json, metrics, `/health/*`, `/metrics`.
    public func makeRouter() -> Router<LanternRequestContext> {
        ServiceRouter.make(readiness: readiness, watches: watches, classify: DependencyErrors.problem(for:))
    }

    /// The process: the HTTP server on `router`, the clients, then the background services, in that start order
    /// (and the reverse stop order).
    public func application(router: Router<LanternRequestContext>, server: HTTPServerBuilder = .http1()) -> some ApplicationProtocol {
        var services = clients + background
        if let postgres, !housekeeping.isEmpty {
            services.append(Housekeeping(client: postgres, rules: housekeeping, clock: clock, logger: logger))
        }
        var app = Application(
            router: router, server: server,
            configuration: .init(address: .hostname(process.host, port: process.port), serverName: "lantern-\(name)"),
            services: services, logger: logger
        )
        let (postgres, schema, migrations, migrated, startup, logger) = (postgres, schema, migrations, migrated, startup, logger)
        app.beforeServerStarts {
            if let postgres, let schema {
                try await Migrator.migrate(schema: schema, migrations: migrations, client: postgres, logger: logger)
            }
            migrated.open()
            for work in startup { try await work() }
        }
        return app
    }
}

/// Runs a background service once the gate (the migrations) has opened; a shutdown before that ends it quietly.
private struct AfterMigrations: Service {
    let gate: StartupGate
    let service: any Service

    func run() async throws {
        await gate.wait()
        guard gate.isOpen else { return }
        try await service.run()
    }
}
