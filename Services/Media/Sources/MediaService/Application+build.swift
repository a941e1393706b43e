import AsyncHTTPClient
import Foundation
import Hummingbird
import ImageSanitizer
import LanternCore
import LanternDatabase
import LanternEvents
import LanternHTTP
import LanternRedis
import LanternService
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
    let backbone = try ServiceBackbone(schema: MomentStore.schema, databaseURL: configuration.databaseURL, redisURL: configuration.redisURL,
                                       streamPrefix: configuration.streamPrefix, logger: logger)
    let store = MomentStore(client: backbone.postgres, outbox: backbone.outbox, clock: dependencies.clock, logger: logger)
    let storage = try dependencies.storage ?? FileMomentStorage(directory: configuration.storageDirectory)

    let keySet = RemoteKeySet(url: configuration.identityURL.appendingPathComponent(".well-known/jwks.json").absoluteString,
                              httpClient: .shared, maxAge: .seconds(600), logger: logger)
    let requireAuth = RequireAccessToken(verifier: AccessTokenVerifier(keySet: keySet, clock: dependencies.clock))

    let router = ServiceRouter.make(readiness: backbone.readiness)
    MomentsController(store: store, storage: storage, sanitizer: ImageSanitizer(maxPixels: configuration.maxPixels), maxBytes: configuration.maxBytes)
        .addRoutes(to: router, requireAuth: requireAuth)

    let consumer = IdentityEventsConsumer(store: store, storage: storage)
    let migrated = backbone.migrated
    let identityEvents = StreamConsumer(endpoint: backbone.redisEndpoint, streams: backbone.streams,
                                        options: .init(stream: backbone.streams.events("identity"), group: "media", consumer: ProcessInfo.processInfo.hostName + "-\(getpid())"),
                                        logger: logger) { event in
        await migrated.wait()
        try await consumer.handle(event)
    }
    var app = Application(
        router: router,
        configuration: .init(address: .hostname(configuration.process.host, port: configuration.process.port), serverName: "lantern-media"),
        services: backbone.services(clock: dependencies.clock, housekeeping: MomentStore.housekeeping) + [identityEvents],
        logger: logger
    )
    app.beforeServerStarts {
        try await backbone.migrate(try Migration.load(from: MediaResources.migrations))
    }
    return app
}

enum MediaResources {
    static var migrations: URL { Bundle.module.url(forResource: "Migrations", withExtension: nil)! }
}
