import AsyncHTTPClient
import Foundation
import Hummingbird
import ImageSanitizer
import LanternCore
import LanternDatabase
import LanternEvents
import LanternHTTP
import LanternRedis
import LanternTokens
import Logging
import PostgresNIO
import ServiceLifecycle

public struct MediaDependencies: Sendable {
    public var clock: WallClock
    public var storage: (any MomentStorage)?
    public init(clock: WallClock = .system, storage: (any MomentStorage)? = nil) {
        self.clock = clock
        self.storage = storage
    }
}

/// Builds the `media` application: Pairly moments, and the consumer of identity's events that keeps media's
/// copy of pairings and names and erases photos when a pairing or an account ends.
public func buildMediaApplication(
    _ configuration: MediaConfiguration,
    dependencies: MediaDependencies = .init(),
    logger: Logger? = nil
) async throws -> some ApplicationProtocol {
    let logger = configuration.process.logger(logger)
    let postgres = PostgresClient(configuration: try .lantern(url: configuration.databaseURL), backgroundLogger: logger)
    let endpoint = try RedisEndpoint(url: configuration.redisURL)
    let redis = RedisClient(endpoint: endpoint, size: 2)
    let streams = StreamNames(prefix: configuration.streamPrefix)
    let outbox = Outbox(schema: MomentStore.schema, streams: streams)
    let store = MomentStore(client: postgres, outbox: outbox, clock: dependencies.clock, logger: logger)
    let storage = try dependencies.storage ?? FileMomentStorage(directory: configuration.storageDirectory)

    let keySet = RemoteKeySet(url: configuration.identityURL.appendingPathComponent(".well-known/jwks.json").absoluteString,
                              httpClient: .shared, maxAge: .seconds(600), logger: logger)
    let requireAuth = RequireAccessToken(verifier: AccessTokenVerifier(keySet: keySet, clock: dependencies.clock))

    var readiness = ReadinessChecks()
    readiness.addPostgres(postgres)
    readiness.addRedis(redis)
    let router = ServiceRouter.make(readiness: readiness)
    MomentsController(store: store, storage: storage, sanitizer: ImageSanitizer(maxPixels: configuration.maxPixels), maxBytes: configuration.maxBytes)
        .addRoutes(to: router, requireAuth: requireAuth)

    let consumer = IdentityEventsConsumer(store: store, storage: storage)
    let migrated = StartupGate()
    let identityEvents = StreamConsumer(endpoint: endpoint, streams: streams,
                                        options: .init(stream: streams.events("identity"), group: "media", consumer: ProcessInfo.processInfo.hostName + "-\(getpid())"),
                                        logger: logger) { event in
        await migrated.wait()
        try await consumer.handle(event)
    }
    var app = Application(
        router: router,
        configuration: .init(address: .hostname(configuration.process.host, port: configuration.process.port), serverName: "lantern-media"),
        services: [postgres, RedisLifecycle(client: redis), identityEvents,
                   OutboxRelay(outbox: outbox, client: postgres, publisher: EventPublisher(redis: redis), logger: logger, startAfter: migrated),
                   Housekeeping(client: postgres, rules: MomentStore.housekeeping, clock: dependencies.clock, logger: logger)],
        logger: logger
    )
    app.beforeServerStarts {
        let migrations = EventMigrations.all + (try Migration.load(from: MediaResources.migrations))
        try await Migrator.migrate(schema: MomentStore.schema, migrations: migrations, client: postgres, logger: logger)
        migrated.open()
    }
    return app
}

enum MediaResources {
    static var migrations: URL { Bundle.module.url(forResource: "Migrations", withExtension: nil)! }
}
