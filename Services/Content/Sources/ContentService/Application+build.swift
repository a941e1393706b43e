import AstroSvitlaContent
import ContentKit
import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternEvents
import LanternHTTP
import LanternLLM
import LanternService
import LanternTokens
import LuckyDayContent
import RoastMeLaterContent
import Logging

/// The apps content serves, each a target of its own (`Services/Content/Sources/<App>`, described by its
/// `ContentAppModule`). A new app is its folder, its target in Package.swift and one line here.
enum ContentApps {
    static let all: [ContentAppModule] = [
        LuckyDayContent.module,
        AstroSvitlaContent.module,
        RoastMeLaterContent.module,
    ]
}

/// Builds the `content` application: every AI text. The platform its apps share — the `content` schema with every
/// app's tables, the outbox, one LLM router over the configured models and every app's local grammars, the
/// astrology client — then each app of `ContentApps.all`: its routes, its periodic work, its part of an account's
/// deletion.
public func buildContentApplication(
    _ configuration: ContentConfiguration,
    dependencies: ServiceDependencies = .init(),
    logger: Logger? = nil
) async throws -> some ApplicationProtocol {
    let clock = dependencies.clock
    var service = ServiceBuilder("content", process: configuration.process, streamPrefix: configuration.streamPrefix, clock: clock, logger: logger)
    let postgres = try service.addDatabase(url: configuration.databaseURL, schema: ContentSchema.name,
                                           migrations: try configuration.apps.flatMap { try $0.module.migrations() })
    let redis = try service.addRedis(url: configuration.redisURL)
    let outbox = service.addOutbox()
    service.addErasedUsers()
    let logger = service.logger
    for app in configuration.apps { MetricHelp.register(app.module.metricHelp) }

    var grammars: [String: Grammar] = [:]
    for app in configuration.apps { try grammars.merge(app.module.grammars()) { first, _ in first } }
    let local = LocalGenerator(grammars: grammars)
    let tokens = configuration.serviceSecret.map {
        ServiceTokenSource(identity: configuration.identityURL, service: "content", secret: $0, http: dependencies.httpClient, clock: clock)
    }
    if tokens == nil { logger.warning("SERVICE_SECRET is not set: Lucky Day profiles and AstroSvitla charts cannot be computed (503)") }
    let platform = ContentPlatform(
        postgres: postgres, outbox: outbox,
        texts: configuration.llm.makeRouter(local: local, http: dependencies.httpClient, redis: redis, prefix: configuration.streamPrefix,
                                           clock: clock, logger: logger),
        local: local,
        astrology: AstrologyClient(client: InternalClient(service: "astrology", baseURL: configuration.astrologyURL, tokens: tokens,
                                                          http: dependencies.httpClient)),
        appStore: configuration.appStore, schedulerInterval: configuration.schedulerInterval,
        renders: RenderLimit(perMinute: configuration.rendersPerAccountPerMinute, redis: redis, prefix: configuration.streamPrefix, logger: logger),
        clock: clock, logger: logger)
    let apps = try configuration.apps.map { try $0.build(platform) }

    for work in apps.flatMap(\.periodicWork) { service.addPeriodic(work) }
    service.addHousekeeping([.processedEvents(schema: ContentSchema.name)] + apps.flatMap(\.housekeeping))
    // One consumer per stream for every app (one group: two consumers of one stream would split its events).
    var consumers: [EventStream: EventHandlers] = [
        IdentityEvents.stream: IdentityEventsConsumer(apps: apps, postgres: postgres, clock: clock, logger: logger).handlers,
    ]
    for consumer in apps.flatMap(\.consumers) { consumers[consumer.stream, default: EventHandlers()].merge(consumer.handlers) }
    for (stream, handlers) in consumers.sorted(by: { "\($0.key)" < "\($1.key)" }) { service.consume(stream, handlers: handlers) }

    let verifier = service.addAccessTokens(identity: configuration.identityURL)
    return service.application(router: buildContentRouter(service.makeRouter(), requireAuth: RequireAccessToken(verifier: verifier), apps: apps))
}

/// content's routes: each app mounts its own (Lucky Day's `/v1/fortunes` and `/v1/widgets/luckyday`; AstroSvitla's
/// `/v1/reports` and `/v1/appstore/notifications`).
func buildContentRouter(_ router: Router<LanternRequestContext>, requireAuth: RequireAccessToken,
                        apps: [any ContentApp]) -> Router<LanternRequestContext> {
    for app in apps { app.addRoutes(to: router, requireAuth: requireAuth) }
    return router
}
