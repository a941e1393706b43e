import AsyncHTTPClient
import Foundation
import GatewayRouting
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import LanternContracts
import LanternCore
import LanternHTTP
import LanternRedis
import LanternService
import LanternTokens
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// Builds the gateway: the only public entry of Lantern.
public func buildGatewayApplication(
    _ configuration: GatewayConfiguration,
    dependencies: ServiceDependencies = .init(),
    logger: Logger? = nil
) async throws -> some ApplicationProtocol {
    let clock = dependencies.clock
    var service = ServiceBuilder("gateway", process: configuration.process, streamPrefix: configuration.streamPrefix, clock: clock, logger: logger)
    MetricHelp.register(GatewayMetrics.metricHelp)
    // Rate limiting sits on every request: a slow Redis must cost at most 250 ms, then the limiter fails open.
    let redis = try service.addRedis(url: configuration.redisURL, size: 4, commandTimeout: .milliseconds(250), connectTimeout: .milliseconds(250))
    let logger = service.logger
    guard let identity = configuration.upstreams["identity"], let redisEndpoint = service.redisEndpoint else {
        throw ConfigurationError(variable: "IDENTITY_URL", message: "is required")
    }

    var clientConfiguration = HTTPClient.Configuration()
    clientConfiguration.timeout = .init(connect: .seconds(2), read: .milliseconds(Int64(configuration.upstreamTimeout * 1000)))
    clientConfiguration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 128)
    clientConfiguration.decompression = .disabled
    clientConfiguration.redirectConfiguration = .disallow
    clientConfiguration.tracing.tracer = nil  // no tracer is bootstrapped: skip the no-op span per request
    let httpClient = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: clientConfiguration)
    service.addClient(HTTPClientLifecycle(client: httpClient))
    // Proxied requests go through the gateway's own pooled client (`UpstreamClient`); the rest through `httpClient`.
    let upstreamClient = UpstreamClient(group: MultiThreadedEventLoopGroup.singleton)
    service.addClient(upstreamClient)

    // Key-set fetches use the shared client: the proxy client's read timeout is the upstream timeout, which is
    // about API calls, not about fetching keys.
    let verifier = service.addAccessTokens(identity: identity)
    let counters = RateCounters(redis: redis, prefix: configuration.streamPrefix, clock: clock, logger: logger)
    service.addService(counters)
    let hub = RealtimeHub()
    service.addGaugeSample { Gauge(label: "lantern_realtime_connections").record(hub.connectionCount) }
    service.addService(RealtimeFeed(hub: hub, endpoint: redisEndpoint, streams: service.streams, logger: logger))
    let routes = RouteTable.lantern
    let realtime = RealtimeConnections(hub: hub, verifier: verifier, client: httpClient, upstreams: configuration.upstreams, routes: routes)
    let socketIO = SocketIOConnections(realtime: realtime)

    let developmentClock = DevelopmentClockController(
        store: DevelopmentClockStore(redis: redis, key: service.streams.developmentClockOffset),
        environment: configuration.process.environment, clock: clock, logger: logger)
    service.addOperationsRoutes { [readiness = service.readiness] router in
        router.get("/health") { _, _ in
            let report = await UpstreamHealth.check(configuration.upstreams, client: httpClient, own: readiness)
            return JSONResponse(report, status: report.status == "ok" ? .ok : .serviceUnavailable)
        }
        router.addRoutes(developmentClock.endpoints, atPath: "/development/clock")
    }
    let router = buildGatewayRouter(service.makeRouter(), realtime: realtime)
    // Every path of the route table is answered by the proxy handler on the connection's event loop, before
    // Hummingbird (`ProxyHandler`); the router above serves the rest.
    let proxy = ProxyEdge(routes: routes, operations: GatewayResources.operations, verifier: verifier,
                          limiter: RateLimiter(redis: redis, prefix: configuration.streamPrefix, logger: logger), counters: counters,
                          client: upstreamClient, configuration: configuration, serverName: "lantern-gateway", logger: logger)
    let limits = ConnectionLimits(headerTimeout: .nanoseconds(Int64(configuration.headerTimeout * 1e9)),
                                  maxConnectionsPerAddress: configuration.maxConnectionsPerAddress, uncapped: configuration.trustedProxies)
    // A WebSocket or Socket.IO handshake to another name is never upgraded: it goes on as plain HTTP, which the
    // router answers 421 (`AllowedHostsMiddleware`), as any other request to that name.
    let allowedHosts = configuration.allowedHosts
    return service.application(router: router, server: .gateway(
        configuration: .init(maxFrameSize: SocketIOConnections.maxPayload, autoPing: .enabled(timePeriod: .seconds(25)), closeTimeout: .seconds(10)),
        limits: limits, proxy: proxy,
        admitsHandshake: { head in
            if let allowedHosts, !allowedHosts.admits(head.headers["host"]) { return false }
            return await realtime.admitsHandshake(head)
        },
        travelledDate: configuration.process.environment == .development
    ) { request, _, _ in
        if let allowedHosts, !allowedHosts.admits(AllowedHosts.hosts(of: request)) { return .dontUpgrade }
        if SocketIOConnections.isSocketIO(URLComponents(string: request.path ?? "")) { return .upgrade([:], socketIO.handler()) }
        return try await realtime.shouldUpgrade(request)
    })
}

/// The gateway's own public routes (`/openapi.yaml`, `/docs`, what `/v1/realtime` and `/socket.io/` answer when not
/// upgraded); the paths of the route table never reach it (`ProxyHandler` answers them). Its upstream report,
/// `/health`, is on the operations port.
func buildGatewayRouter(_ router: Router<LanternRequestContext>, realtime: RealtimeConnections) -> Router<LanternRequestContext> {
    // A request to a name not the gateway's (DNS rebinding) was answered 421 by the router every process starts from
    // (`ServiceRouter.make`, `ALLOWED_HOSTS`; in development, or wherever that is set).
    router.get("/openapi.yaml") { _, _ in
        Response(status: .ok, headers: [.contentType: "application/yaml; charset=utf-8", .cacheControl: "public, max-age=300"],
                 body: .init(byteBuffer: ByteBuffer(bytes: GatewayResources.openAPI)))
    }
    // The API reference, rendered in the browser from /openapi.yaml by Swagger UI, every file served from here.
    router.get("/docs") { _, _ in try GatewayResources.docsPage("index.html") }
    router.get("/docs/:file") { _, context in try GatewayResources.docsPage(try context.parameters.require("file")) }
    router.get("/v1/realtime") { request, _ -> Response in
        // Reached when the request was not upgraded: say why — the token's problem first, as the upgrade checks it.
        let token = RealtimeConnections.token(authorization: request.headers[.authorization],
                                              uri: URLComponents(string: request.uri.description))
        _ = try await realtime.admit(try token ?? RequireAccessToken.bearerToken(request))
        throw Problem(status: 426, code: "upgrade_required", title: "Upgrade required", detail: "Open /v1/realtime as a WebSocket.")
    }
    router.get("/socket.io/") { _, _ -> Response in
        throw Problem.badRequest("Socket.IO here speaks Engine.IO 4 over WebSocket only: connect with transports: ['websocket'].",
                                 code: "transport_unsupported")
    }
    return router
}

enum GatewayResources {
    /// The files of `/docs` (Resources/README.md says where Swagger UI's come from), read once.
    static let docs: [String: (type: String, bytes: ByteBuffer)] = {
        let types = ["index.html": "text/html; charset=utf-8", "start.js": "text/javascript; charset=utf-8",
                     "swagger-ui-bundle.js": "text/javascript; charset=utf-8", "swagger-ui.css": "text/css; charset=utf-8"]
        var files: [String: (type: String, bytes: ByteBuffer)] = [:]
        for (name, type) in types {
            guard let url = Bundle.module.url(forResource: "Resources/" + name, withExtension: nil), let data = try? Data(contentsOf: url) else { continue }
            files[name] = (type, ByteBuffer(bytes: data))
        }
        return files
    }()

    /// One file of the reference page; anything else is the usual 404. The page may run only its own scripts.
    static func docsPage(_ name: String) throws -> Response {
        guard let file = docs[name] else { throw Problem.notFound("No such file of the API reference.", code: "route_not_found") }
        var headers: HTTPFields = [.contentType: file.type, .cacheControl: name == "index.html" ? "no-cache" : "public, max-age=3600"]
        headers[.contentSecurityPolicy] = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"
        headers[.xContentTypeOptions] = "nosniff"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: file.bytes))
    }

    /// The methods of every documented path, from the document below.
    static let operations = OperationTable(openAPI: String(decoding: openAPI, as: UTF8.self))

    static let openAPI: [UInt8] = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
              let data = try? Data(contentsOf: url) else { return Array("openapi: 3.1.0\n".utf8) }
        return Array(data)
    }()
}

/// The gateway's own metrics.
enum GatewayMetrics {
    static let metricHelp: [String: String] = [
        "lantern_realtime_connections": "Open real-time connections (WebSocket and Socket.IO) on this gateway.",
        "lantern_rate_limit_decisions_total": "Rate-limit decisions at the gateway, by scope and decision.",
    ]
}
