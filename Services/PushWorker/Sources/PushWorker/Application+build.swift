import AsyncHTTPClient
import Foundation
import Hummingbird
import LanternCore
import LanternDatabase
import LanternEvents
import LanternHTTP
import LanternRedis
import LanternService
import Logging
import NIOPosix
import NIOSSL
import ServiceLifecycle

public struct PushWorkerDependencies: Sendable {
    public var clock: WallClock
    /// Replaces the providers built from the configuration (tests).
    public var apns: (any PushProvider)?
    public var fcm: (any PushProvider)?
    public init(clock: WallClock = .system, apns: (any PushProvider)? = nil, fcm: (any PushProvider)? = nil) {
        self.clock = clock
        self.apns = apns
        self.fcm = fcm
    }
}

/// Builds the `push-worker`: a consumer of identity's events that keeps the device registry, a consumer of
/// `lantern.jobs.push` that delivers through APNs / FCM (or the log), the retry scheduler, and an HTTP server
/// for `/health/*` and `/metrics` only.
public func buildPushWorkerApplication(
    _ configuration: PushWorkerConfiguration,
    dependencies: PushWorkerDependencies = .init(),
    logger: Logger? = nil
) async throws -> some ApplicationProtocol {
    let logger = configuration.process.logger(logger)
    let backbone = try ServiceBackbone(schema: DeviceRegistry.schema, databaseURL: configuration.databaseURL, redisURL: configuration.redisURL,
                                       streamPrefix: configuration.streamPrefix, logger: logger)
    let registry = DeviceRegistry(client: backbone.postgres, logger: logger)
    let httpClient = try makeProviderHTTPClient(configuration)
    let log = LogPushProvider(logger: logger)
    let apns: any PushProvider = try dependencies.apns ?? configuration.apns.map { apns in
        APNsProvider(baseURL: apns.baseURL, topics: apns.topics,
                     signer: try APNsTokenSigner(privateKeyPEM: apns.privateKeyPEM, keyID: apns.keyID, teamID: apns.teamID, clock: dependencies.clock),
                     httpClient: httpClient, timeout: configuration.requestTimeout)
    } ?? log
    let fcm: any PushProvider = dependencies.fcm ?? configuration.fcm.map { fcm in
        FCMProvider(baseURL: fcm.baseURL, projectID: fcm.serviceAccount.projectID,
                    tokens: GoogleAccessTokens(account: fcm.serviceAccount, httpClient: httpClient, clock: dependencies.clock, timeout: configuration.requestTimeout),
                    httpClient: httpClient, timeout: configuration.requestTimeout)
    } ?? log
    logger.info("push providers", metadata: ["ios": "\(apns.name)", "android": "\(fcm.name)"])

    let retries = RetryQueue(redis: backbone.redis, streams: backbone.streams)
    let dispatcher = PushDispatcher(registry: registry, catalogue: try Catalogue.bundled(), apns: apns, fcm: fcm, retries: retries,
                                    redis: backbone.redis, streams: backbone.streams,
                                    policy: .init(maxAttempts: configuration.maxAttempts, retryBase: configuration.retryBase, retryMax: configuration.retryMax),
                                    clock: dependencies.clock, logger: logger)
    let consumerName = ProcessInfo.processInfo.hostName + "-\(getpid())"
    let migrated = backbone.migrated
    let identityEvents = StreamConsumer(endpoint: backbone.redisEndpoint, streams: backbone.streams,
                                        options: .init(stream: backbone.streams.events("identity"), group: "push-worker", consumer: consumerName),
                                        logger: logger) { event in
        await migrated.wait()
        try await registry.handle(event)
    }
    // A batch of jobs is sent at once, its requests multiplexed on the providers' HTTP/2 connections.
    var jobOptions = StreamConsumer.Options(stream: backbone.streams.jobs("push"), group: "push-worker", consumer: consumerName)
    jobOptions.batchSize = configuration.concurrency
    // A new group starts at `0` (the default): jobs queued before the worker's first start are still delivered.
    let jobs = StreamConsumer(endpoint: backbone.redisEndpoint, streams: backbone.streams, options: jobOptions, logger: logger) { (batch: [EventEnvelope]) in
        await migrated.wait()
        return await dispatcher.handle(batch: batch)
    }
    let scheduler = RetryScheduler(queue: retries, dispatcher: dispatcher, registry: registry, clock: dependencies.clock, logger: logger)

    let router = ServiceRouter.make(readiness: backbone.readiness)
    var app = Application(
        router: router,
        configuration: .init(address: .hostname(configuration.process.host, port: configuration.process.port), serverName: "lantern-push-worker"),
        services: backbone.services(clock: dependencies.clock, housekeeping: DeviceRegistry.housekeeping, relay: false)
            + [HTTPClientLifecycle(client: httpClient), identityEvents, jobs, scheduler],
        logger: logger
    )
    app.beforeServerStarts {
        try await backbone.migrate(try Migration.load(from: PushWorkerResources.migrations))
    }
    return app
}

/// One client for every provider: HTTP/2 when the server offers it (APNs requires it), extra trust roots when
/// configured.
func makeProviderHTTPClient(_ configuration: PushWorkerConfiguration) throws -> HTTPClient {
    var tls = TLSConfiguration.makeClientConfiguration()
    if let file = configuration.trustRootsFile {
        guard FileManager.default.isReadableFile(atPath: file), let certificates = try? NIOSSLCertificate.fromPEMFile(file), !certificates.isEmpty else {
            throw ConfigurationError(variable: "PUSH_TRUST_ROOTS_FILE", message: "must be a readable PEM file of certificates: '\(file)'")
        }
        tls.additionalTrustRoots = [.certificates(certificates)]
    }
    var clientConfiguration = HTTPClient.Configuration(tlsConfiguration: tls)
    clientConfiguration.httpVersion = .automatic
    clientConfiguration.timeout.connect = .seconds(5)
    return HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: clientConfiguration)
}

enum PushWorkerResources {
    static var migrations: URL { Bundle.module.url(forResource: "Migrations", withExtension: nil)! }
}
