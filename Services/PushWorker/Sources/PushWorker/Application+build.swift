import AsyncHTTPClient
import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP
import LanternService
import Logging
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// The APNs and FCM providers, when a test replaces those built from the configuration.
public enum APNsProviderDependency: ServiceDependencyKey {
    public typealias Value = any PushProvider
}

public enum FCMProviderDependency: ServiceDependencyKey {
    public typealias Value = any PushProvider
}

extension ServiceDependencies {
    public var apns: (any PushProvider)? {
        get { self[APNsProviderDependency.self] }
        set { self[APNsProviderDependency.self] = newValue }
    }

    public var fcm: (any PushProvider)? {
        get { self[FCMProviderDependency.self] }
        set { self[FCMProviderDependency.self] = newValue }
    }
}

/// Builds the `push-worker`: a consumer of identity's events that keeps the device registry, a consumer of
/// `lantern.jobs.push` that delivers through APNs / FCM (or the log), the retry scheduler; it has no API, so its
/// HTTP port answers `/health/live` only and everything else is on its operations port.
public func buildPushWorkerApplication(
    _ configuration: PushWorkerConfiguration,
    dependencies: ServiceDependencies = .init(),
    logger: Logger? = nil
) async throws -> some ApplicationProtocol {
    let clock = dependencies.clock
    var service = ServiceBuilder("push-worker", process: configuration.process, streamPrefix: configuration.streamPrefix, clock: clock, logger: logger)
    MetricHelp.register(PushWorkerMetrics.metricHelp)
    let postgres = try service.addDatabase(url: configuration.databaseURL, schema: DeviceRegistry.schema, migrations: PushWorkerResources.migrations)
    let redis = try service.addRedis(url: configuration.redisURL)
    service.addHousekeeping(DeviceRegistry.housekeeping)
    let logger = service.logger

    let registry = DeviceRegistry(client: postgres, logger: logger)
    let httpClient = try makeProviderHTTPClient(configuration)
    service.addClient(HTTPClientLifecycle(client: httpClient))
    let log = LogPushProvider(logger: logger)
    let apns: any PushProvider = try dependencies.apns ?? configuration.apns.map { apns in
        APNsProvider(baseURL: apns.baseURL, topics: apns.topics,
                     signer: try APNsTokenSigner(privateKeyPEM: apns.privateKeyPEM, keyID: apns.keyID, teamID: apns.teamID, clock: clock.outsideWorld),
                     httpClient: httpClient, timeout: configuration.requestTimeout)
    } ?? log
    let fcm: any PushProvider = dependencies.fcm ?? configuration.fcm.map { fcm in
        FCMProvider(baseURL: fcm.baseURL, projectID: fcm.serviceAccount.projectID,
                    tokens: GoogleAccessTokens(account: fcm.serviceAccount, httpClient: httpClient, clock: clock.outsideWorld, timeout: configuration.requestTimeout),
                    httpClient: httpClient, timeout: configuration.requestTimeout)
    } ?? log
    logger.info("push providers", metadata: ["ios": "\(apns.name)", "android": "\(fcm.name)"])

    let retries = RetryQueue(redis: redis, streams: service.streams)
    let dispatcher = PushDispatcher(registry: registry, catalogue: try Catalogue.bundled(), apns: apns, fcm: fcm, retries: retries,
                                    redis: redis, streams: service.streams,
                                    policy: .init(maxAttempts: configuration.maxAttempts, retryBase: configuration.retryBase, retryMax: configuration.retryMax),
                                    clock: clock, logger: logger)
    service.consume(IdentityEvents.stream, handlers: registry.handlers)
    // A batch of jobs is sent at once, its requests multiplexed on the providers' HTTP/2 connections. A new group
    // starts at `0`: jobs queued before the worker's first start are still delivered.
    service.consume(PushRequest.stream, batchSize: configuration.concurrency) { batch in await dispatcher.handle(batch: batch).map { $0 ? .done : .retry } }
    service.addPeriodic(RetryScheduler(queue: retries, dispatcher: dispatcher, registry: registry, clock: clock, logger: logger).work)

    return service.application(router: buildPushWorkerRouter(service.makeRouter()))
}

/// push-worker's routes: none of its own (it answers `/health/live` here and its operations routes on `OPS_PORT`);
/// jobs come from `lantern.jobs.push`, never over HTTP.
func buildPushWorkerRouter(_ router: Router<LanternRequestContext>) -> Router<LanternRequestContext> {
    router
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
    static var migrations: URL? { Bundle.module.url(forResource: "Migrations", withExtension: nil) }
}

/// push-worker's own metrics.
enum PushWorkerMetrics {
    static let metricHelp: [String: String] = [
        "lantern_push_notifications_total": "Push notifications sent, by provider and outcome.",
        "lantern_push_jobs_without_devices_total": "Push jobs for a user with no registered device, by kind.",
    ]
}
