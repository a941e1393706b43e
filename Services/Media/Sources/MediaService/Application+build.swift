import AsyncHTTPClient
import Foundation
import Hummingbird
import ImageSanitizer
import LanternContracts
import LanternCore
import LanternHTTP
import LanternObjectStorage
import LanternService
import LanternTokens
import Logging
import NIOPosix

/// Where media keeps photo bytes, when a test replaces it (default: `MEDIA_STORAGE`'s folder or bucket).
public enum PhotoFilesDependency: ServiceDependencyKey {
    public typealias Value = any PhotoFiles
}

extension ServiceDependencies {
    public var photoFiles: (any PhotoFiles)? {
        get { self[PhotoFilesDependency.self] }
        set { self[PhotoFilesDependency.self] = newValue }
    }
}

/// Builds the `media` application: Pairly moments, and the consumer of identity's events that keeps media's
/// copy of pairings and names and erases photos when a pairing or an account ends.
public func buildMediaApplication(
    _ configuration: MediaConfiguration,
    dependencies: ServiceDependencies = .init(),
    logger: Logger? = nil
) async throws -> some ApplicationProtocol {
    var service = ServiceBuilder("media", process: configuration.process, streamPrefix: configuration.streamPrefix,
                                 clock: dependencies.clock, logger: logger)
    let postgres = try service.addDatabase(url: configuration.databaseURL, schema: MomentStore.schema, migrations: MediaResources.migrations)
    try service.addRedis(url: configuration.redisURL)
    let outbox = service.addOutbox()
    service.addErasedUsers()
    service.addHousekeeping(MomentStore.housekeeping)

    let store = MomentStore(client: postgres, outbox: outbox, logger: service.logger)
    let files: any PhotoFiles
    if let given = dependencies.photoFiles {
        files = given
    } else {
        files = StoredPhotoFiles(objects: try service.addObjectStorage(configuration.storage))
    }
    service.consume(IdentityEvents.stream, handlers: IdentityEventsConsumer(store: store, files: files).handlers)

    let verifier = service.addAccessTokens(identity: configuration.identityURL)
    let router = buildMediaRouter(
        service.makeRouter(),
        requireAuth: RequireAccessToken(verifier: verifier),
        moments: MomentsController(sharing: MomentSharing(records: store, files: files, sanitizer: ImageSanitizer(maxPixels: configuration.maxPixels, timeBudget: configuration.parseTimeout),
                                                          clock: dependencies.clock),
                                   maxBytes: configuration.maxBytes)
    )
    return service.application(router: router)
}

/// media's routes: `/v1/moments`, `/v1/widgets/pairly` and its part of the real-time state.
func buildMediaRouter(_ router: Router<LanternRequestContext>, requireAuth: RequireAccessToken, moments: MomentsController) -> Router<LanternRequestContext> {
    router.group("/v1/moments").add(middleware: requireAuth).addRoutes(moments.moments)
    router.group("/v1/widgets/pairly").add(middleware: requireAuth).addRoutes(moments.widget)
    router.group(RouterPath(RealtimeState.path)).add(middleware: requireAuth).addRoutes(moments.realtimeState)
    return router
}

enum MediaResources {
    static var migrations: URL? { Bundle.module.url(forResource: "Migrations", withExtension: nil) }
}
