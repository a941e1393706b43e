import Foundation
import Hummingbird
import HummingbirdCore
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import LanternHTTP
import LanternRedis
import LanternTokens
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
///
/// Every process listens twice: the API on `HTTP_PORT`, and the operations router (`/health/ready`,
/// `/metrics`, anything added with `addOperationsRoutes`) on `OPS_PORT`, which only the deployment reaches.
public struct ServiceBuilder: Sendable {
    /// The service's name: the envelopes' `producer`, its consumer groups, its server name.
    public let name: String
    public let process: ProcessSettings
    public let logger: Logger
    public let clock: WallClock
    public let streams: StreamNames
    /// Opens once the schema's migrations are applied; consumers and the outbox relay start after it.
    public let migrated = StartupGate()
    /// Opens once the API server listens: until then `/health/ready` says `api: starting`, since the operations
    /// port answers first (while migrations run and start-up work such as an index build is done).
    public let serving = StartupGate()

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
    private var operationsRoutes: [@Sendable (Router<LanternRequestContext>) -> Void] = []
    private var gaugeSamples: [GaugeSampler.Sample] = []
    private var periodic: [PeriodicWork] = []
    /// `addErasedUsers` was called: the schema records erasures, and the `user.deleted` consumer is audited.
    private var erasesUsers = false

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
        try addDatabase(url: url, schema: schema, migrations: try folder.map(Migration.load(from:)) ?? [])
    }

    /// The service's own schema, migrated from `migrations` before start (a service of several parts, each with
    /// its own folder of migrations, passes them all).
    @discardableResult
    public mutating func addDatabase(url: String, schema: String, migrations: [Migration]) throws -> PostgresClient {
        let client = PostgresClient(configuration: try .lantern(url: url, applicationName: "lantern-\(name)"), backgroundLogger: logger)
        postgres = client
        self.schema = schema
        self.migrations += migrations
        clients.append(client)
        readiness.add("postgres") { try await client.query("SELECT 1") }
        gaugeSamples.append(BusGauges.connections(postgres: client, applicationName: "lantern-\(name)"))
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
        if process.environment == .development {
            // Time travel (`make time-travel`): the stack's shared clock offset, read before the first request and
            // then each second, so scheduled work and every answer run as if the time had passed.
            let key = streams.developmentClockOffset
            let follow: @Sendable () async throws -> Int = {
                if let text = try await client.send("GET", key).string, let value = Int64(text) { DevelopmentTime.advance(toMilliseconds: value) }
                return 0
            }
            beforeServerStarts { _ = try? await follow() }
            addPeriodic(PeriodicWork("development_clock", every: .seconds(1), jitter: 0, pass: follow))
        }
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
        gaugeSamples.append(BusGauges.outbox(postgres: postgres, schema: schema))
        return outbox
    }

    /// Consumes `stream` as a member of the group `group` (default: the service's name) with typed handlers. A group
    /// that erases users on identity's `user.deleted` (with `addErasedUsers`) is also audited (`ErasureAudit`): a
    /// deletion acknowledged in the group without being handled is found and handled.
    public mutating func consume(_ stream: EventStream, group: String? = nil, handlers: EventHandlers) {
        guard let redisEndpoint else { preconditionFailure("consume needs addRedis first") }
        let options = consumerOptions(stream, group: group)
        background.append(StreamConsumer(endpoint: redisEndpoint, streams: streams, options: options,
                                         logger: logger, startAfter: migrated, handlers: handlers))
        if stream == IdentityEvents.stream, handlers.types.contains(IdentityEvents.UserDeleted.eventType), erasesUsers,
           let redis, let postgres, let schema {
            let audit = ErasureAudit(redis: redis, postgres: postgres, schema: schema, stream: options.stream, group: options.group,
                                     handlers: handlers, clock: clock, logger: logger)
            addPeriodic(PeriodicWork("erasure_audit", every: .seconds(300), lease: .seconds(300)) { try await audit.run() })
        }
    }

    /// Consumes `stream` a batch at a time (a worker that saves round trips by batching).
    public mutating func consume(_ stream: EventStream, group: String? = nil, batchSize: Int,
                                 batchHandler: @escaping StreamConsumer.BatchHandler) {
        guard let redisEndpoint else { preconditionFailure("consume needs addRedis first") }
        var options = consumerOptions(stream, group: group)
        options.batchSize = batchSize
        // A batch's round trips are shared by its messages: under a steady flow, let the next batch fill a little.
        options.linger = .milliseconds(5)
        background.append(StreamConsumer(endpoint: redisEndpoint, streams: streams, options: options, logger: logger,
                                         startAfter: migrated, batchHandler: batchHandler))
    }

    /// Each instance is one consumer of the group, named after its host and process. Its lag, pending entries and
    /// dead letters become gauges.
    private mutating func consumerOptions(_ stream: EventStream, group: String?) -> StreamConsumer.Options {
        if let redis {
            let name = streams.name(of: stream)
            gaugeSamples.append(BusGauges.consumer(redis: redis, stream: name, deadLetters: streams.deadLetter(of: name), group: group ?? self.name))
        }
        return StreamConsumer.Options(stream: streams.name(of: stream), group: group ?? name,
                                      consumer: ProcessInfo.processInfo.hostName + "-\(ProcessInfo.processInfo.processIdentifier)")
    }

    /// The schema's record of erased users and the fence that keeps writes racing an erasure out (`ErasedUsers`),
    /// kept 30 days; needs `addDatabase` first. Every service that keeps rows of users and consumes `user.deleted`
    /// adds it.
    public mutating func addErasedUsers() {
        guard let schema else { preconditionFailure("addErasedUsers needs addDatabase first") }
        erasesUsers = true
        migrations.append(ErasedUsers.migration)
        housekeeping.append(ErasedUsers.housekeeping(schema: schema))
    }

    /// Hourly deletion of rows past their age (needs `addDatabase`), as periodic work named `housekeeping`.
    public mutating func addHousekeeping(_ rules: [Housekeeping.Rule]) {
        housekeeping += rules
    }

    /// A client of other servers (an HTTP client, a connection pool) whose `run` shuts it down at the end: started
    /// before the background services and stopped after them, and not held back by the migrations, so that it is shut
    /// down however the process ends (async-http-client traps on a client released without a shutdown).
    public mutating func addClient(_ client: any Service) {
        clients.append(client)
    }

    /// Work repeated on a timer (`PeriodicWork`: interval with jitter, drain, lease, one shutdown path, metrics),
    /// from the migrations on. Leased work needs `addDatabase` first: its `periodic_leases` table joins the schema.
    public mutating func addPeriodic(_ work: PeriodicWork) {
        precondition(!periodic.contains { $0.name == work.name }, "periodic work \(work.name) is added twice")
        if work.lease != nil {
            guard postgres != nil else { preconditionFailure("leased periodic work needs addDatabase first") }
            if !periodic.contains(where: { $0.lease != nil }) { migrations = PeriodicMigrations.all + migrations }
        }
        periodic.append(work)
    }

    /// A background service that runs as long as the process, started after the clients it may use and, like
    /// every consumer, only once the migrations are applied (a loop over the service's tables needs them).
    public mutating func addService(_ service: any Service) {
        background.append(AfterMigrations(gate: migrated, service: service))
    }

    /// A gauge read every 15 s (`GaugeSampler`, as periodic work named `gauges`), after the migrations.
    public mutating func addGaugeSample(_ sample: @escaping @Sendable () async throws -> Void) {
        gaugeSamples.append(sample)
    }

    /// App tokens checked against identity's published key set (`<identity>/.well-known/jwks.json`). The set is
    /// loaded beside the server as the process starts, and tried again until it is, so that the first requests
    /// find it rather than wait for it; until then `/health/ready` says `identity_keys: failing`. The tokens of a
    /// deleted account are refused (`erasedAccounts`); needs `addRedis` first.
    public mutating func addAccessTokens(identity: URL) -> AccessTokenVerifier {
        guard let erasedAccounts else { preconditionFailure("addAccessTokens needs addRedis first: deleted accounts are marked there") }
        let keySet = RemoteKeySet(identity: identity, logger: logger)
        background.append(KeySetPreload(keySet: keySet))
        readiness.add("identity_keys") {
            guard await keySet.isLoaded else { throw KeysNotLoadedYet(url: keySet.url) }
        }
        return AccessTokenVerifier(keySet: keySet, clock: clock).refusingErased(erasedAccounts)
    }

    /// The accounts deleted while their tokens live (`ErasedAccounts`), in the Redis of `addRedis`.
    public var erasedAccounts: ErasedAccounts? {
        redis.map { ErasedAccounts(redis: $0, streams: streams, logger: logger) }
    }

    /// A named check of `/health/ready`.
    public mutating func addReadiness(_ name: String, _ check: @escaping ReadinessChecks.Check) {
        readiness.add(name, check)
    }

    /// Work before the server accepts requests, after the migrations (keys to load, an index to build).
    public mutating func beforeServerStarts(_ work: @escaping @Sendable () async throws -> Void) {
        startup.append(work)
    }

    /// Routes for the operations port only (the gateway's upstream report).
    public mutating func addOperationsRoutes(_ register: @escaping @Sendable (Router<LanternRequestContext>) -> Void) {
        operationsRoutes.append(register)
    }

    /// The router every service starts from: its own names only (`ProcessSettings.apiHosts`), request ids,
    /// problem+json, metrics, outage answers, `/health/live`.
    public func makeRouter() -> Router<LanternRequestContext> {
        ServiceRouter.make(hosts: process.apiHosts, watches: watches, classify: DependencyErrors.problem(for:), describe: DependencyErrors.describe)
    }

    /// What the operations port serves: `/health/live`, `/health/ready` over the parts added, `/metrics`, and the
    /// routes of `addOperationsRoutes`.
    public func makeOperationsRouter() -> Router<LanternRequestContext> {
        var readiness = readiness
        readiness.add("api") { [serving] in
            guard serving.isOpen else { throw NotServingYet() }
        }
        let router = ServiceRouter.operations(readiness: readiness, hosts: process.operationsHosts)
        for register in operationsRoutes { register(router) }
        return router
    }

    /// The process: the operations server, the clients, then the background services, in that start order (and
    /// the reverse stop order), around the API server on `router`. The operations server starts first so probes
    /// get an answer (not ready yet) while migrations run.
    public func application(router: Router<LanternRequestContext>, server: HTTPServerBuilder = .http1()) -> some ApplicationProtocol {
        let operations = Application(
            router: makeOperationsRouter(),
            configuration: .init(address: .hostname(process.operationsHost, port: process.operationsPort), serverName: "lantern-\(name)-ops"),
            logger: logger
        )
        var services: [any Service] = [operations] + clients + background
        var periodic = periodic
        if !gaugeSamples.isEmpty {
            let sampler = GaugeSampler(samples: gaugeSamples, logger: logger)
            periodic.append(PeriodicWork("gauges", every: .seconds(15), jitter: 0) { await sampler.sampleAll() })
        }
        if let postgres, !housekeeping.isEmpty {
            let housekeeping = Housekeeping(client: postgres, rules: housekeeping, clock: clock, logger: logger)
            periodic.append(PeriodicWork("housekeeping", every: .seconds(3600), startAfterInterval: true) {
                await housekeeping.runOnce().values.reduce(0, +)
            })
        }
        var leases: PeriodicLeases?
        if let postgres, let schema { leases = PeriodicLeases(client: postgres, schema: schema, clock: clock, logger: logger) }
        for work in periodic {
            services.append(AfterMigrations(gate: migrated, service: PeriodicRunner(work: work, leases: leases, logger: logger)))
        }
        // The router inside a backstop: its watcher cancels the requests in flight when an outage begins, and one
        // stuck in a client that ignores the outage still gets its 503.
        let backstop = OutageBackstop(router.buildResponder(), watches: watches)
        if !watches.isEmpty { services.append(backstop.watcher) }
        var app = Application(
            responder: backstop, server: server,
            configuration: .init(address: .hostname(process.host, port: process.port), serverName: "lantern-\(name)"),
            services: services, onServerRunning: { [serving] _ in serving.open() }, logger: logger
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

struct KeysNotLoadedYet: Error, CustomStringConvertible {
    let url: String
    var description: String { "no key set loaded from \(url) yet" }
}

/// Loads identity's key set as the process starts, then stays until the shutdown (a service that returns would
/// end the whole group).
private struct KeySetPreload: Service {
    let keySet: RemoteKeySet

    func run() async throws {
        await cancelWhenGracefulShutdown { await keySet.preload() }
        try? await gracefulShutdown()
    }
}

struct NotServingYet: Error, CustomStringConvertible {
    var description: String { "starting" }
}

/// Runs a background service once the gate (the migrations) has opened; a shutdown before that ends it quietly.
private struct AfterMigrations: Service {
    let gate: StartupGate
    let service: any Service

    func run() async throws {
        await cancelWhenGracefulShutdown { await gate.wait() }
        guard gate.isOpen, !Task.isShuttingDownGracefully else { return }
        try await service.run()
    }
}
