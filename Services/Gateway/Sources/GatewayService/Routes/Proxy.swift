import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import LanternCore
import LanternHTTP
import LanternRedis
import LanternTokens
import Logging
import Metrics
import Tracing
import NIOCore
import NIOHTTP1
import NIOPosix

/// The edge: for every path in the route table, refuse a method the path does not serve (405), check the token,
/// count the request, and forward it.
///
/// Paths outside the table fall through to the gateway's own routes (health, metrics, OpenAPI) or a 404.
/// `/internal/…` never leaves the gateway, whatever the prefix.
struct ProxyMiddleware: RouterMiddleware {
    typealias Context = LanternRequestContext

    let routes: RouteTable
    /// The methods of each documented path (the served OpenAPI document).
    let operations: OperationTable
    let upstreams: [String: URL]
    let verifier: AccessTokenVerifier
    let limiter: RateLimiter
    let counters: RateCounters
    let client: UpstreamClient
    let configuration: GatewayConfiguration

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // One canonical path for routing, limits and forwarding alike (the matched prefix in the table's spelling).
        let path = try CanonicalPath(request.uri.path).path
        guard let route = routes.match(path) else { return try await next(request, context) }
        let operation = operations.check(request.method, at: path)
        // The route label of the request metrics: the documented template, or the table's prefix for a path the
        // document does not list (forwarded all the same; its service answers).
        context.coreContext.endpointPath.value = operation.template ?? route.prefix + "/…"
        if let allow = operation.refusal {
            var response = Problem(status: 405, code: "method_not_allowed", title: "Method not allowed",
                                   detail: "\(request.method.rawValue) is not served here; allowed: \(allow.joined(separator: ", ")).").response()
            response.headers[.allow] = allow.joined(separator: ", ")
            return response
        }
        var context = context
        if !route.isPublic {
            context.auth = try await verifier.verify(try RequireAccessToken.bearerToken(request))
        }
        let address = clientAddress(request, context: context)
        for (scope, decision) in await rateLimit(route.limit, sub: context.auth?.sub, address: address) {
            let limited: Int?
            if case .limited(let retryAfter) = decision { limited = retryAfter } else { limited = nil }
            Counter(label: "lantern_rate_limit_decisions_total", dimensions: [("scope", scope), ("decision", limited == nil ? "allowed" : "limited")]).increment()
            if let limited { throw Problem.tooManyRequests(retryAfter: limited) }
        }
        guard let upstream = upstreams[route.service] else {
            throw Problem(status: 503, code: "service_unavailable", title: "Service unavailable",
                          detail: "\(route.service) is not deployed on this server.")
        }
        return try await forward(request, path: routes.forwardedPath(path, for: route), context: context, to: upstream,
                                 service: route.service, clientAddress: address)
    }

    /// Sign-in routes: a bucket per client address (credential guessing); code guessing: per user and per
    /// address — both low limits, checked in Redis on every request. Everything else: per user, or per address
    /// for anonymous calls, counted in memory and shared through Redis in batches (`RateCounters`).
    /// Each bucket's decision with its scope (the metrics' label).
    func rateLimit(_ limit: RouteTable.Limit, sub: String?, address: String) async -> [(String, RateLimiter.Decision)] {
        switch limit {
        case .signIn:
            return [("signin", await limiter.check(scope: "signin", key: address, limit: configuration.signInLimitPerMinute))]
        case .deviceSignIn:
            return [("signin", await limiter.check(scope: "signin", key: address, limit: configuration.signInLimitPerMinute)),
                    ("device-day", await limiter.check(scope: "device-day", key: address, limit: configuration.deviceSignInLimitPerDay,
                                                       window: .seconds(86_400)))]
        case .codeGuess:
            var decisions = [("guess-ip", await limiter.check(scope: "guess-ip", key: address, limit: configuration.codeGuessLimitPerMinute))]
            if let sub { decisions.append(("guess-user", await limiter.check(scope: "guess-user", key: sub, limit: configuration.codeGuessLimitPerMinute))) }
            return decisions
        case .standard:
            if let sub { return [("user", counters.check(scope: "user", key: sub, limit: configuration.userLimitPerMinute))] }
            return [("ip", counters.check(scope: "ip", key: address, limit: configuration.userLimitPerMinute))]
        }
    }

    /// The peer, or, from a trusted proxy, the client it names (`TrustedProxies`).
    func clientAddress(_ request: Request, context: Context) -> String {
        let peer = context.remoteAddress?.ipAddress ?? "unknown"
        guard !configuration.trustedProxies.isEmpty else { return peer }
        return configuration.trustedProxies.clientAddress(peer: peer, forwardedFor: request.headers[values: .xForwardedFor])
    }

    static let hopByHop: Set<String> = ["connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                                        "transfer-encoding", "upgrade", "host", "content-length"]

    func forward(_ request: Request, path: String, context: Context, to upstream: URL, service: String, clientAddress: String) async throws -> Response {
        var headers = HTTPHeaders()
        headers.reserveCapacity(request.headers.count + 4)
        headers.add(name: "Host", value: upstream.port.map { "\(upstream.host ?? ""):\($0)" } ?? (upstream.host ?? ""))
        for field in request.headers where !Self.hopByHop.contains(field.name.canonicalName) && field.name != .xForwardedFor {
            headers.add(name: field.name.rawName, value: field.value)
        }
        // The chain goes on only from a trusted proxy; from anyone else the peer is all the services hear.
        let peer = context.remoteAddress?.ipAddress ?? clientAddress
        let chain = configuration.trustedProxies.contains(peer) ? request.headers[values: .xForwardedFor] : []
        headers.add(name: "X-Forwarded-For", value: (chain + [peer]).joined(separator: ", "))
        headers.add(name: "X-Request-Id", value: context.requestID)
        // The trace goes on to the service (this client has no tracing of its own).
        if let trace = InstrumentationContext.current {
            InstrumentationSystem.instrument.inject(trace, into: &headers, using: HTTPHeadersInjector())
        }
        var body: ByteBuffer?
        if ![.get, .head, .delete, .options].contains(request.method) || request.headers[.contentLength] != nil {
            var request = request
            body = try await request.collectBody(limit: configuration.maxBodyBytes)
        }
        if let body { headers.add(name: "Content-Length", value: String(body.readableBytes)) }
        let basePath = upstream.path.hasSuffix("/") ? String(upstream.path.dropLast()) : upstream.path
        let head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method.rawValue),
                                   uri: basePath + path + (request.uri.query.map { "?" + $0 } ?? ""), headers: headers)
        let response: UpstreamResponse
        do {
            response = try await client.execute(UpstreamRequest(head: head, body: body), host: upstream.host ?? "127.0.0.1",
                                                port: upstream.port ?? 80, on: context.eventLoop,
                                                deadline: .now() + .milliseconds(Int64(configuration.upstreamTimeout * 1000)))
        } catch {
            throw Self.problem(for: error, service: service, logger: context.logger)
        }
        var fields = HTTPFields()
        fields.reserveCapacity(response.head.headers.count)
        for (name, value) in response.head.headers {
            let lowercased = name.lowercased()
            guard !Self.hopByHop.contains(lowercased) || lowercased == "content-length", let fieldName = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        let status = HTTPResponse.Status(code: Int(response.head.status.code), reasonPhrase: response.head.status.reasonPhrase)
        switch response.body {
        case .buffered(let body):
            return Response(status: status, headers: fields, body: .init(byteBuffer: body))
        case .stream(let chunks):
            return Response(status: status, headers: fields, body: ResponseBody(asyncSequence: chunks))
        }
    }

    /// Down → 503, too slow → 504, anything else broken on the way → 502 (with the cause in the log). Never a hang.
    static func problem(for error: any Error, service: String, logger: Logger) -> Problem {
        logger.warning("upstream failed", metadata: ["service": "\(service)", "error": "\(error)"])
        switch error as? UpstreamError {
        case .timedOut:
            return Problem(status: 504, code: "upstream_timeout", title: "Gateway timeout", detail: "\(service) did not answer in time.")
        case .connectFailed:
            return Problem(status: 503, code: "upstream_unavailable", title: "Service unavailable", detail: "\(service) is not reachable.")
        case .closedBeforeAnswer, .brokenAnswer, nil:
            break
        }
        return Problem(status: 502, code: "bad_gateway", title: "Bad gateway", detail: "\(service) gave no usable answer.")
    }
}

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
}

extension PathRefusal: ProblemConvertible {
    var problem: Problem {
        switch self {
        case .invalid(let detail): Problem.badRequest(detail, code: "invalid_path")
        case .internalRoute: Problem.notFound("No route for this path.", code: "route_not_found")
        }
    }
}
