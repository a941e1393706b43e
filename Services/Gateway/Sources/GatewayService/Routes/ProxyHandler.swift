import Foundation
import GatewayRouting
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Instrumentation
import LanternCore
import LanternHTTP
import LanternRedis
import LanternTokens
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import Synchronization
import Tracing

/// The gateway's proxy: every request whose path is in the route table is answered here, on its connection's event
/// loop, from head to answer — host check, canonical path, 405 table, token (the verified-token cache, then the
/// erased-account mark), rate counters, forwarding on the same loop's upstream connections, and every error as a
/// problem — with the request id, trace, metrics and access line the template gives every other answer.
///
/// Why not Hummingbird's router: a proxied request does little of its own, and Hummingbird's server path (an async
/// sequence per connection, a task per request, the middleware chain's hand-offs) cost the gateway more than the
/// forwarding itself (docs/benchmarks.md, issue #45). Everything else — `/docs`, `/openapi.yaml`, WebSocket and
/// Socket.IO, `/health/live`, development routes — goes on to Hummingbird behind this handler.
///
/// One request at a time per connection, as HTTP/1.1 answers in order: parts that arrive while an answer (ours or
/// Hummingbird's) is under way wait here, and reading stops until it is written.
final class ProxyHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private enum State {
        /// Between requests.
        case idle
        /// A request of the route table: ours until its answer is written and its body read.
        case proxying(ProxiedRequest)
        /// A request for Hummingbird: its parts go on until its end; the connection is Hummingbird's until both
        /// the request's end has gone on and its answer's end has gone out.
        case passing(requestEnded: Bool, answerEnded: Bool)
    }

    let edge: ProxyEdge
    private var state = State.idle
    /// Parts of the requests after the current one, in order.
    private var held = CircularBuffer<HTTPServerRequestPart>()
    /// A read was asked for while parts were held: it waits until they are taken.
    private var readDeferred = false
    /// Held parts are being handed out (`finished`).
    private var draining = false
    /// The server is stopping: the connection closes after the answer under way.
    private var quiescing = false
    private var idleTimer: Scheduled<Void>?
    /// A request whose parts stopped coming: closed after the idle timeout without a read (what Hummingbird's idle
    /// handler did for its requests; the proxy's and, now that its own is off, Hummingbird's).
    private var stalledTimer: Scheduled<Void>?
    private var lastRead = NIODeadline.uptimeNanoseconds(0)
    private var context: ChannelHandlerContext?

    init(edge: ProxyEdge) { self.edge = edge }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        idleTimer = nil
        stalledTimer?.cancel()
        stalledTimer = nil
        // Leaving for a WebSocket upgrade: whatever waited goes on to what follows.
        while let part = held.popFirst() { context.fireChannelRead(wrapInboundOut(part)) }
        self.context = nil
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        lastRead = .now()
        switch state {
        case .proxying(let request) where !request.requestEnded && !draining:
            request.received(part, handler: self, context: context)
        case .passing(requestEnded: false, let answerEnded) where !draining:
            context.fireChannelRead(data)
            if case .end = part {
                state = .passing(requestEnded: true, answerEnded: answerEnded)
                if answerEnded { finished(keepAlive: true, context: context) }
            }
        case .idle where held.isEmpty:
            start(part, context: context)
        default:
            held.append(part)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Most requests arrive whole in one read; one still coming after it is watched until it ends.
        if stalledTimer == nil, isReadingRequest, let timeout = edge.idleTimeout { watchStall(context: context, deadline: lastRead + timeout) }
        context.fireChannelReadComplete()
    }

    private var isReadingRequest: Bool {
        switch state {
        case .proxying(let request): !request.requestEnded
        case .passing(let requestEnded, _): !requestEnded
        case .idle: false
        }
    }

    private func watchStall(context: ChannelHandlerContext, deadline: NIODeadline) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        stalledTimer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = bound.value
            handler.stalledTimer = nil
            guard handler.isReadingRequest, let timeout = handler.edge.idleTimeout else { return }
            if handler.lastRead + timeout <= .now() {
                context.close(promise: nil)
            } else {
                handler.watchStall(context: context, deadline: handler.lastRead + timeout)
            }
        }
    }

    func read(context: ChannelHandlerContext) {
        // Parts already wait: read no more until they are taken (a client pipelining without end).
        if held.count > 0 {
            readDeferred = true
            return
        }
        context.read()
    }

    private func start(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        idleTimer?.cancel()
        idleTimer = nil
        guard case .head(let head) = part else {
            // Only a head starts a request; the decoder sends nothing else first.
            context.fireChannelRead(wrapInboundOut(part))
            return
        }
        switch edge.route(head, peer: context.channel.remoteAddress) {
        case .hummingbird:
            state = .passing(requestEnded: false, answerEnded: false)
            context.fireChannelRead(wrapInboundOut(part))
        case .proxy(let decision):
            let request = ProxiedRequest(head: head, decision: decision, edge: edge, channel: context.channel)
            state = .proxying(request)
            request.begin(handler: self, context: context)
        }
    }

    /// The current exchange is over: the held requests go on, or the connection waits (or closes).
    func finished(keepAlive: Bool, context: ChannelHandlerContext) {
        state = .idle
        guard keepAlive, !quiescing else {
            context.close(promise: nil)
            return
        }
        // An exchange that ends while the held parts are being handed out: the loop below goes on with the next.
        guard !draining else { return }
        draining = true
        var forwarded = false
        loop: while let part = held.first {
            switch state {
            case .idle:
                held.removeFirst()
                start(part, context: context)
            case .passing(requestEnded: false, let answerEnded):
                held.removeFirst()
                context.fireChannelRead(wrapInboundOut(part))
                forwarded = true
                if case .end = part {
                    state = answerEnded ? .idle : .passing(requestEnded: true, answerEnded: false)
                }
            case .proxying(let request) where !request.requestEnded:
                held.removeFirst()
                request.received(part, handler: self, context: context)
            default:
                break loop
            }
        }
        draining = false
        if forwarded { context.fireChannelReadComplete() }
        guard held.isEmpty else { return }
        if case .idle = state, let timeout = edge.idleTimeout {
            // Idle between requests, Hummingbird's included (its own idle timeout is off: it sees only its requests).
            let channel = context.channel
            idleTimer = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
        }
        if readDeferred {
            readDeferred = false
            context.read()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        // The server is stopping: an idle connection closes now, one with a proxied answer under way after it, and
        // Hummingbird decides for its own.
        switch state {
        case .idle: context.close(promise: nil)
        case .proxying: quiescing = true
        case .passing:
            quiescing = true
            context.fireUserInboundEventTriggered(event)
        }
    }

    // MARK: Outbound

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
        // Hummingbird's answer ended: the connection is ours again once its request has ended too.
        guard case .passing(let requestEnded, answerEnded: false) = state, case .end = unwrapOutboundIn(data) else { return }
        state = .passing(requestEnded: requestEnded, answerEnded: true)
        guard requestEnded else { return }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        // After the write returns: Hummingbird may close the connection right after its end.
        context.eventLoop.execute {
            let (handler, context) = bound.value
            guard handler.context != nil, context.channel.isActive, case .passing(true, true) = handler.state else { return }
            handler.finished(keepAlive: true, context: context)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if case .proxying(let request) = state, context.channel.isWritable { request.writable() }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .proxying(let request) = state { request.clientGone() }
        idleTimer?.cancel()
        idleTimer = nil
        stalledTimer?.cancel()
        stalledTimer = nil
        context.fireChannelInactive()
    }

    // MARK: Writing answers

    /// Writes one part of the current proxied answer.
    func write(_ part: HTTPServerResponsePart, context: ChannelHandlerContext, flush: Bool) {
        if flush {
            context.writeAndFlush(wrapOutboundOut(part), promise: nil)
        } else {
            context.write(wrapOutboundOut(part), promise: nil)
        }
    }
}

/// Where a request goes, decided from its head.
enum ProxyRouting {
    case hummingbird
    case proxy(ProxyDecision)
}

/// The routing of a request the proxy answers: a problem at once, or the route to forward to.
enum ProxyDecision {
    case answer(Problem, route: String?, allow: String?)
    case forward(RouteTable.Entry, path: String, query: String?, template: String)
}

/// One proxied request in progress: checks, body, forwarding, answer.
final class ProxiedRequest {
    let head: HTTPRequestHead
    let decision: ProxyDecision
    let edge: ProxyEdge
    let channel: any Channel
    let started = ContinuousClock.now
    let requestID: String
    let keepAlive: Bool
    private(set) var requestEnded = false
    private var logger: Logger
    private var span: (any Span)?
    private var routeLabel: String?
    private var body: ByteBuffer?
    private var bodyTooLarge = false
    /// Checks passed, waiting for the body's end to forward.
    private var readyToForward: ((ProxiedRequest) -> Void)?
    /// The answer (or its head, for a streamed one) is written; the body still being read is dropped.
    private var answered = false
    private var answerEnded = false
    private var stream: UpstreamBodyStream?
    private var handler: ProxyHandler?
    private var context: ChannelHandlerContext?

    init(head: HTTPRequestHead, decision: ProxyDecision, edge: ProxyEdge, channel: any Channel) {
        self.head = head
        self.decision = decision
        self.edge = edge
        self.channel = channel
        self.requestID = RequestIDMiddleware.id(from: head.headers.first(name: "x-request-id"))
        self.keepAlive = head.isKeepAlive
        var logger = edge.logger
        logger[metadataKey: "request_id"] = .string(requestID)
        self.logger = logger
    }

    var method: String { head.method.rawValue }

    func begin(handler: ProxyHandler, context: ChannelHandlerContext) {
        self.handler = handler
        self.context = context
        RequestRecord.started()
        var trace = InstrumentationContext.topLevel
        InstrumentationSystem.instrument.extract(head.headers, into: &trace, using: HTTPHeadersExtractor())
        let span = startSpan("HTTP \(method)", context: trace, ofKind: .server)
        self.span = span
        switch decision {
        case .answer(let problem, let route, let allow):
            routeLabel = route
            answer(problem, extraHeaders: allow.map { [("Allow", $0)] } ?? [])
        case .forward(let route, let path, let query, let template):
            routeLabel = template
            span.operationName = template
            if span.isRecording {
                span.updateAttributes { attributes in
                    attributes["http.request.method"] = method
                    attributes["url.path"] = path
                    attributes["url.query"] = query
                    attributes["http.route"] = template
                    attributes["user_agent.original"] = head.headers.first(name: "user-agent")
                    attributes["net.sock.peer.addr"] = channel.remoteAddress?.ipAddress
                }
            }
            check(route, path: path, query: query, context: context)
        }
    }

    /// The token, then the limits, then (once the body is in) the forwarding. Callbacks on the loop, not a chain of
    /// futures: each link of a chain is a generic instantiation and an allocation on every request.
    private func check(_ route: RouteTable.Entry, path: String, query: String?, context: ChannelHandlerContext) {
        guard !route.isPublic else { return limit(route, path: path, query: query, sub: nil) }
        let token: String
        do {
            token = try RequireAccessToken.bearerToken(authorization: head.headers.first(name: "authorization"))
        } catch {
            return fail(error)
        }
        edge.verifier.verify(token, on: context.eventLoop).assumeIsolated().whenComplete { result in
            switch result {
            case .success(let claims):
                self.logger[metadataKey: "user"] = .string(claims.sub)
                self.limit(route, path: path, query: query, sub: claims.sub)
            case .failure(let error):
                self.fail(error)
            }
        }
    }

    private func limit(_ route: RouteTable.Entry, path: String, query: String?, sub: String?) {
        let address = edge.clientAddress(peer: channel.remoteAddress, head: head)
        let passed = { (retryAfter: Int?) in
            if let retryAfter { return self.fail(Problem.tooManyRequests(retryAfter: retryAfter)) }
            self.readyToForward = { request in request.forward(route, path: path, query: query, address: address) }
            self.forwardIfReady()
        }
        // The common case decides at once, in memory; the low limits ask Redis.
        if case .standard = route.limit { return passed(edge.countStandard(sub: sub, address: address)) }
        guard let loop = context?.eventLoop else { return }
        edge.rateLimit(route.limit, sub: sub, address: address, on: loop).assumeIsolated().whenComplete { result in
            passed((try? result.get()) ?? nil)
        }
    }

    /// A part of this request's body (or its end).
    func received(_ part: HTTPServerRequestPart, handler: ProxyHandler, context: ChannelHandlerContext) {
        switch part {
        case .head:
            // The decoder never sends a head before the last request's end.
            break
        case .body(var chunk):
            guard !answered, !bodyTooLarge else { return }
            if (body?.readableBytes ?? 0) + chunk.readableBytes > edge.maxBodyBytes {
                bodyTooLarge = true
                body = nil
                // Checked already: 413 now, not after the rest (which is read and dropped).
                forwardIfReady()
            } else if body == nil {
                body = chunk
            } else {
                body!.writeBuffer(&chunk)
            }
        case .end:
            requestEnded = true
            if answered {
                if answerEnded { done() }
            } else {
                forwardIfReady()
            }
        }
    }

    /// Forwards once the checks have passed and the body is in; 413 as soon as both the checks have passed and the
    /// body is over the limit (the order the template's middleware answered in).
    private func forwardIfReady() {
        guard let forward = readyToForward, !answered, requestEnded || bodyTooLarge else { return }
        readyToForward = nil
        if bodyTooLarge { return fail(NIOTooManyBytesError(maxBytes: edge.maxBodyBytes)) }
        forward(self)
    }

    private func forward(_ route: RouteTable.Entry, path: String, query: String?, address: String) {
        guard let upstream = edge.upstreams[route.service] else {
            return fail(Problem(status: 503, code: "service_unavailable", title: "Service unavailable",
                                detail: "\(route.service) is not deployed on this server."))
        }
        guard let context else { return }
        var upstreamHead = edge.upstreamHead(head, path: upstream.basePath + edge.routes.forwardedPath(path, for: route) + (query.map { "?" + $0 } ?? ""),
                                             upstream: upstream, peer: channel.remoteAddress?.ipAddress ?? address, requestID: requestID)
        if let span { InstrumentationSystem.instrument.inject(span.context, into: &upstreamHead.headers, using: HTTPHeadersInjector()) }
        let sendsBody = ![.GET, .HEAD, .DELETE, .OPTIONS].contains(head.method) || head.headers.contains(name: "content-length")
        let body = sendsBody ? (self.body ?? context.channel.allocator.buffer(capacity: 0)) : nil
        if let body { upstreamHead.headers.add(name: "Content-Length", value: String(body.readableBytes)) }
        self.body = nil
        let deadline = NIODeadline.now() + .milliseconds(Int64(edge.upstreamTimeout * 1000))
        edge.client.execute(UpstreamRequest(head: upstreamHead, body: body), host: upstream.host, port: upstream.port,
                            on: context.eventLoop, deadline: deadline)
            .assumeIsolated().whenComplete { result in
                switch result {
                case .success(let response): self.relay(response)
                case .failure(let error): self.fail(ProxyEdge.problem(for: error, service: route.service, logger: self.logger))
                }
            }
    }

    // MARK: The answer

    private func relay(_ response: UpstreamResponse) {
        guard let handler, let context, context.channel.isActive else {
            if case .stream(let stream) = response.body { stream.cancel() }
            return
        }
        var headers = HTTPHeaders()
        headers.reserveCapacity(response.head.headers.count + 4)
        for (name, value) in response.head.headers {
            let lowercased = name.lowercased()
            guard !ProxyEdge.hopByHop.contains(lowercased) || lowercased == "content-length",
                  !ProxyEdge.replacedAnswerFields.contains(lowercased) else { continue }
            headers.add(name: name, value: value)
        }
        let status = Int(response.head.status.code)
        switch response.body {
        case .buffered(let body):
            if !(head.method == .HEAD || status == 204 || status == 304) {
                headers.replaceOrAdd(name: "content-length", value: String(body.readableBytes))
            }
            answered = true
            handler.write(.head(responseHead(response.head.status, headers)), context: context, flush: false)
            if body.readableBytes > 0 { handler.write(.body(.byteBuffer(body)), context: context, flush: false) }
            end(status: status)
        case .stream(let stream):
            answered = true
            self.stream = stream
            handler.write(.head(responseHead(response.head.status, headers)), context: context, flush: true)
            stream.read(onChunk: { [weak self] chunk in self?.streamed(chunk) },
                        onEnd: { [weak self] error in self?.streamEnded(error, status: status) })
        }
    }

    private func streamed(_ chunk: ByteBuffer) {
        guard let handler, let context else { return }
        handler.write(.body(.byteBuffer(chunk)), context: context, flush: true)
        // A slow client slows the upstream: no more reads there until this connection drains.
        if !context.channel.isWritable { stream?.pause() }
    }

    func writable() { stream?.resume() }

    private func streamEnded(_ error: (any Error)?, status: Int) {
        stream = nil
        guard let context else { return }
        if let error {
            // The head is out: the only honest end of a broken answer is a broken connection.
            logger.warning("upstream answer broke off", metadata: ["error": "\(error)"])
            record(status: status)
            context.close(promise: nil)
            return
        }
        end(status: status)
    }

    /// The client's connection closed: a stream nobody reads is given up, and nothing more is written. Recorded
    /// with nginx's 499 (the client closed the request) when no answer had ended.
    func clientGone() {
        stream?.cancel()
        stream = nil
        handler = nil
        context = nil
        if !answerEnded {
            answerEnded = true
            record(status: 499)
        }
    }

    /// Answers `error` as the template's problem middleware would.
    private func fail(_ error: any Error) {
        answer(ProblemMiddleware<LanternRequestContext>.problem(for: error, requestID: requestID))
    }

    private func answer(_ problem: Problem, extraHeaders: [(String, String)] = []) {
        guard !answered, let handler, let context else { return }
        answered = true
        if problem.status >= 500 {
            logger.debug("request failed", metadata: ["error": "\(problem.detail ?? problem.title)", "path": "\(head.uri)"])
        }
        let body = problem.body()
        var headers = HTTPHeaders([("Content-Type", "application/problem+json"), ("Content-Length", String(body.readableBytes))])
        if let retryAfter = problem.retryAfter { headers.add(name: "Retry-After", value: String(retryAfter)) }
        for (name, value) in extraHeaders { headers.add(name: name, value: value) }
        handler.write(.head(responseHead(HTTPResponseStatus(statusCode: problem.status), headers)), context: context, flush: false)
        if head.method != .HEAD { handler.write(.body(.byteBuffer(body)), context: context, flush: false) }
        end(status: problem.status)
    }

    /// The template's fields on every answer (request id, date, server), and `Connection: close` when this is the
    /// last.
    private func responseHead(_ status: HTTPResponseStatus, _ headers: HTTPHeaders) -> HTTPResponseHead {
        var headers = headers
        headers.add(name: "X-Request-Id", value: requestID)
        headers.add(name: "Date", value: ResponseDate.now)
        headers.add(name: "Server", value: edge.serverName)
        if !keepAlive {
            headers.add(name: "Connection", value: "close")
        } else if head.version.minor == 0 {
            headers.add(name: "Connection", value: "keep-alive")
        }
        let version: HTTPVersion = head.version.minor == 0 ? .http1_0 : .http1_1
        return HTTPResponseHead(version: version, status: status, headers: headers)
    }

    private func end(status: Int) {
        guard let handler, let context else { return }
        handler.write(.end(nil), context: context, flush: true)
        answerEnded = true
        record(status: status)
        if requestEnded { done() }
        // Else the rest of the body is read and dropped, then the connection goes on.
    }

    /// The metrics, the access line and the span's end, once per request.
    private func record(status: Int) {
        guard let span else { return }
        self.span = nil
        if span.isRecording {
            span.updateAttributes { attributes in attributes["http.response.status_code"] = status }
            if status >= 500 { span.setStatus(.init(code: .error)) }
        }
        span.end()
        let (route, method, started, logger) = (routeLabel, method, started, logger)
        InstrumentationContext.$current.withValue(span.context) {
            RequestRecord.answered(route: route, method: method, status: status, since: started, logger: logger)
        }
    }

    private func done() {
        guard let handler, let context else { return }
        self.handler = nil
        self.context = nil
        handler.finished(keepAlive: keepAlive, context: context)
    }
}

/// What every proxied request needs, shared by all connections: the tables, the token check, the limits, the
/// upstreams and the client to them.
struct ProxyEdge: Sendable {
    struct Upstream: Sendable {
        let host: String
        let port: Int
        /// The URL's path without its trailing `/`, before every forwarded path.
        let basePath: String
        /// `Host` as the service is sent it.
        let hostField: String

        init(_ url: URL) {
            host = url.host ?? "127.0.0.1"
            port = url.port ?? 80
            basePath = url.path.hasSuffix("/") ? String(url.path.dropLast()) : url.path
            hostField = url.port.map { "\(url.host ?? ""):\($0)" } ?? (url.host ?? "")
        }
    }

    let routes: RouteTable
    /// The methods of each documented path (the served OpenAPI document).
    let operations: OperationTable
    let upstreams: [String: Upstream]
    let verifier: AccessTokenVerifier
    let limiter: RateLimiter
    let counters: RateCounters
    let client: UpstreamClient
    let configuration: GatewayConfiguration
    let serverName: String
    let logger: Logger

    init(routes: RouteTable, operations: OperationTable, verifier: AccessTokenVerifier, limiter: RateLimiter, counters: RateCounters,
         client: UpstreamClient, configuration: GatewayConfiguration, serverName: String, logger: Logger) {
        self.routes = routes
        self.operations = operations
        self.upstreams = configuration.upstreams.mapValues(Upstream.init)
        self.verifier = verifier
        self.limiter = limiter
        self.counters = counters
        self.client = client
        self.configuration = configuration
        self.serverName = serverName
        self.logger = logger
    }

    var maxBodyBytes: Int { configuration.maxBodyBytes }
    var upstreamTimeout: TimeInterval { configuration.upstreamTimeout }
    var idleTimeout: TimeAmount? {
        configuration.idleTimeout > 0 ? .nanoseconds(Int64(configuration.idleTimeout * 1e9)) : nil
    }

    /// The proxy's part of a request, from its head: a request to another name is answered 421 (what the
    /// template's host check answers), a path that is not canonical 400 or 404, a path outside the table goes to
    /// Hummingbird, a method the path does not serve 405.
    func route(_ head: HTTPRequestHead, peer: SocketAddress?) -> ProxyRouting {
        let uri = URI(head.uri)
        if let hosts = configuration.allowedHosts {
            let named = head.headers["host"]
            if !hosts.admits(named) { return .proxy(.answer(hosts.refusal(named), route: nil, allow: nil)) }
        }
        let path: String
        do throws(PathRefusal) {
            path = try CanonicalPath(uri.path).path
        } catch {
            return .proxy(.answer(error.problem, route: nil, allow: nil))
        }
        guard let route = routes.match(path) else { return .hummingbird }
        let method = HTTPRequest.Method(head.method.rawValue) ?? .get
        let operation = operations.check(method, at: path)
        // The route label of the request metrics: the documented template, or the table's prefix for a path the
        // document does not list (forwarded all the same; its service answers).
        let template = operation.template ?? route.prefix + "/…"
        if let allow = operation.refusal {
            let listed = allow.joined(separator: ", ")
            return .proxy(.answer(Problem(status: 405, code: "method_not_allowed", title: "Method not allowed",
                                          detail: "\(head.method.rawValue) is not served here; allowed: \(listed)."),
                                  route: template, allow: listed))
        }
        return .proxy(.forward(route, path: path, query: uri.query, template: template))
    }

    /// Sign-in routes: a bucket per client address (credential guessing); code guessing: per user and per
    /// address — both low limits, checked in Redis on every request. Everything else: per user, or per address
    /// for anonymous calls, counted in memory and shared through Redis in batches (`RateCounters`).
    /// The seconds to wait when a bucket is over its limit, else nil.
    func rateLimit(_ limit: RouteTable.Limit, sub: String?, address: String, on loop: any EventLoop) -> EventLoopFuture<Int?> {
        let perMinute = Duration.seconds(60)
        let checks: [(scope: String, key: String, limit: Int, window: Duration)]
        switch limit {
        case .standard:
            return loop.makeSucceededFuture(countStandard(sub: sub, address: address))
        case .signIn:
            checks = [("signin", address, configuration.signInLimitPerMinute, perMinute)]
        case .deviceSignIn:
            checks = [("signin", address, configuration.signInLimitPerMinute, perMinute),
                      ("device-day", address, configuration.deviceSignInLimitPerDay, .seconds(86_400))]
        case .codeGuess:
            checks = [("guess-ip", address, configuration.codeGuessLimitPerMinute, perMinute)]
                + (sub.map { [("guess-user", $0, configuration.codeGuessLimitPerMinute, perMinute)] } ?? [])
        }
        let limiter = self.limiter
        return loop.makeFutureWithTask {
            // Every bucket counts the request, limited or not; the first over its limit answers.
            var retryAfter: Int?
            for check in checks {
                let decision = await limiter.check(scope: check.scope, key: check.key, limit: check.limit, window: check.window)
                if let limited = Self.count(check.scope, decision), retryAfter == nil { retryAfter = limited }
            }
            return retryAfter
        }
    }

    /// The standard limit: per user, or per address for anonymous calls, decided in memory (`RateCounters`).
    func countStandard(sub: String?, address: String) -> Int? {
        guard let sub else { return Self.count("ip", counters.check(scope: "ip", key: address, limit: configuration.userLimitPerMinute)) }
        return Self.count("user", counters.check(scope: "user", key: sub, limit: configuration.userLimitPerMinute))
    }

    /// Counts a decision in the metrics; the seconds to wait when limited.
    static func count(_ scope: String, _ decision: RateLimiter.Decision) -> Int? {
        let limited: Int?
        if case .limited(let retryAfter) = decision { limited = retryAfter } else { limited = nil }
        decisionCounters[scope]?[limited == nil ? 0 : 1].increment()
        return limited
    }

    /// `lantern_rate_limit_decisions_total` of each scope, allowed and limited, made once (making a metric asks the
    /// registry: a lock, the name checked, the labels hashed).
    static let decisionCounters: [String: [Counter]] = Dictionary(uniqueKeysWithValues: ["signin", "device-day", "guess-ip", "guess-user", "user", "ip"].map { scope in
        (scope, ["allowed", "limited"].map { Counter(label: "lantern_rate_limit_decisions_total", dimensions: [("scope", scope), ("decision", $0)]) })
    })

    /// The peer, or, from a trusted proxy, the client it names (`TrustedProxies`).
    func clientAddress(peer address: SocketAddress?, head: HTTPRequestHead) -> String {
        let peer = address?.ipAddress ?? "unknown"
        guard !configuration.trustedProxies.isEmpty else { return peer }
        return configuration.trustedProxies.clientAddress(peer: peer, forwardedFor: head.headers["x-forwarded-for"])
    }

    static let hopByHop: Set<String> = ["connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                                        "transfer-encoding", "upgrade", "host", "content-length"]
    /// Fields of the service's answer the gateway writes itself, as the template does on every answer.
    static let replacedAnswerFields: Set<String> = ["date", "server", "x-request-id"]

    /// The head the service is sent: the client's fields without hop-by-hop ones, `Host` of the service, the
    /// forwarding chain and the request id.
    func upstreamHead(_ head: HTTPRequestHead, path: String, upstream: Upstream, peer: String, requestID: String) -> HTTPRequestHead {
        var headers = HTTPHeaders()
        headers.reserveCapacity(head.headers.count + 4)
        headers.add(name: "Host", value: upstream.hostField)
        for (name, value) in head.headers {
            let lowercased = name.lowercased()
            guard !Self.hopByHop.contains(lowercased), lowercased != "x-forwarded-for", lowercased != "x-request-id" else { continue }
            headers.add(name: name, value: value)
        }
        // The chain goes on only from a trusted proxy; from anyone else the peer is all the services hear.
        let chain = configuration.trustedProxies.contains(peer) ? head.headers["x-forwarded-for"] : []
        headers.add(name: "X-Forwarded-For", value: (chain + [peer]).joined(separator: ", "))
        headers.add(name: "X-Request-Id", value: requestID)
        return HTTPRequestHead(version: .http1_1, method: head.method, uri: path, headers: headers)
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

/// `Date` of every proxied answer, written once a second (what Hummingbird's date cache does for its own).
enum ResponseDate {
    private static let cache = Mutex<(second: Int, text: String)>((0, ""))

    static var now: String {
        // The machine's clock, as Hummingbird's date cache (development's travelled time is `DevelopmentDateHeader`'s).
        let second = Int(Date().timeIntervalSince1970)
        return cache.withLock { cache in
            if cache.second != second { cache = (second, HTTPDate.string(secondsSince1970: second)) }
            return cache.text
        }
    }
}
