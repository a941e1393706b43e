import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import LanternCore
import LanternHTTP
import LanternTokens
import Logging
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
    let client: HTTPClient
    let configuration: GatewayConfiguration

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // One canonical path for routing, limits and forwarding alike (the matched prefix in the table's spelling).
        let path = try CanonicalPath(request.uri.path).path
        guard let route = routes.match(path) else { return try await next(request, context) }
        if let allow = operations.refusal(of: request.method, at: path) {
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
        for decision in await rateLimit(route.limit, sub: context.auth?.sub, address: address) {
            if case .limited(let retryAfter) = decision { throw Problem.tooManyRequests(retryAfter: retryAfter) }
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
    func rateLimit(_ limit: RouteTable.Limit, sub: String?, address: String) async -> [RateLimiter.Decision] {
        switch limit {
        case .signIn:
            return [await limiter.check(scope: "signin", key: address, limit: configuration.signInLimitPerMinute)]
        case .codeGuess:
            var decisions = [await limiter.check(scope: "guess-ip", key: address, limit: configuration.codeGuessLimitPerMinute)]
            if let sub { decisions.append(await limiter.check(scope: "guess-user", key: sub, limit: configuration.codeGuessLimitPerMinute)) }
            return decisions
        case .standard:
            if let sub { return [counters.check(scope: "user", key: sub, limit: configuration.userLimitPerMinute)] }
            return [counters.check(scope: "ip", key: address, limit: configuration.userLimitPerMinute)]
        }
    }

    func clientAddress(_ request: Request, context: Context) -> String {
        if configuration.trustForwardedFor, let forwarded = request.headers[.xForwardedFor],
           let last = forwarded.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty {
            // The load balancer appends the address it saw; anything before it was written by the client.
            return last
        }
        return context.remoteAddress?.ipAddress ?? "unknown"
    }

    static let bufferedResponseLimit = 256 * 1024

    static let hopByHop: Set<String> = ["connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                                        "transfer-encoding", "upgrade", "host", "content-length"]

    func forward(_ request: Request, path: String, context: Context, to upstream: URL, service: String, clientAddress: String) async throws -> Response {
        let query = request.uri.query.map { "?" + $0 } ?? ""
        var outbound = HTTPClientRequest(url: upstream.absoluteString.trimmingSuffix("/") + path + query)
        outbound.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headers where !Self.hopByHop.contains(field.name.canonicalName) && field.name != .xForwardedFor {
            outbound.headers.add(name: field.name.rawName, value: field.value)
        }
        let peer = context.remoteAddress?.ipAddress ?? clientAddress
        let forwardedFor = configuration.trustForwardedFor ? [request.headers[.xForwardedFor], peer].compactMap { $0 }.joined(separator: ", ") : peer
        outbound.headers.replaceOrAdd(name: "X-Forwarded-For", value: forwardedFor)
        outbound.headers.replaceOrAdd(name: "X-Request-Id", value: context.requestID)
        if ![.get, .head, .delete, .options].contains(request.method) || request.headers[.contentLength] != nil {
            var request = request
            outbound.body = .bytes(try await request.collectBody(limit: configuration.maxBodyBytes))
        }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(outbound, deadline: .now() + .milliseconds(Int64(configuration.upstreamTimeout * 1000)))
        } catch {
            throw Self.problem(for: error, service: service, logger: context.logger)
        }
        var headers = HTTPFields()
        for (name, value) in response.headers where !Self.hopByHop.contains(name.lowercased()) {
            if let fieldName = HTTPField.Name(name) { headers.append(HTTPField(name: fieldName, value: value)) }
        }
        let status = HTTPResponse.Status(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase)
        // Small bodies of known length (almost every API answer) are read whole and written in one go: streaming
        // them costs several cross-thread hand-offs per response. Large or unknown-length bodies stream.
        if let text = response.headers.first(name: "content-length"), let length = Int(text) {
            headers[.contentLength] = text
            if length <= Self.bufferedResponseLimit {
                do {
                    let body = try await response.body.collect(upTo: length)
                    return Response(status: status, headers: headers, body: .init(byteBuffer: body))
                } catch {
                    throw Self.problem(for: error, service: service, logger: context.logger)
                }
            }
        }
        return Response(status: status, headers: headers, body: ResponseBody(asyncSequence: response.body))
    }

    /// Down → 503, too slow → 504, anything else broken on the way → 502. Never a hang.
    static func problem(for error: any Error, service: String, logger: Logger) -> Problem {
        logger.warning("upstream failed", metadata: ["service": "\(service)", "error": "\(String(reflecting: error))"])
        if let error = error as? HTTPClientError {
            if error == .deadlineExceeded || error == .readTimeout {
                return Problem(status: 504, code: "upstream_timeout", title: "Gateway timeout", detail: "\(service) did not answer in time.")
            }
            if error == .connectTimeout {
                return Problem(status: 503, code: "upstream_unavailable", title: "Service unavailable", detail: "\(service) is not reachable.")
            }
        }
        if error is NIOConnectionError || (error as? IOError).map({ [ECONNREFUSED, ECONNRESET, EHOSTUNREACH].contains($0.errnoCode) }) == true
            || String(describing: error).contains("connectTimeout") || String(describing: error).contains("onnection refused") {
            return Problem(status: 503, code: "upstream_unavailable", title: "Service unavailable", detail: "\(service) is not reachable.")
        }
        return Problem(status: 502, code: "bad_gateway", title: "Bad gateway", detail: "\(service) gave no usable answer.")
    }
}

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
}
