import AsyncHTTPClient
import Foundation
import LanternContracts
import LanternCore
import LanternTokens
import NIOCore
import NIOFoundationCompat

/// Calls another service's internal routes (`InternalRoute`, declared in LanternContracts) with this service's
/// token: the one client every service-to-service call goes through.
///
/// - A 401 is answered once more with a fresh token (identity's key may have rotated since the token was cached).
/// - Every call has a deadline: the client's timeout, or less when the caller's own request has less time left.
/// - A 4xx with a problem body is the callee's word on the request (`InternalRefusal`: a field that failed its
///   check, a missing resource) and comes back as it was said, for the caller to answer its client with.
/// - Anything else — no token, the callee unreachable, slow, failing, or answering out of contract — is
///   `InternalUnavailable`, with the callee's `Retry-After` when it gave one: the caller answers 503.
public struct InternalClient: Sendable {
    /// The callee, as `Services/services.tsv` names it.
    public let service: String
    let baseURL: String
    let tokens: ServiceTokenSource?
    let http: HTTPClient
    let timeout: Duration
    /// Answers larger than this are out of contract (4 MiB: a chart drawn as SVG is the largest).
    let maximumAnswer: Int

    /// - Parameter tokens: nil when `SERVICE_SECRET` is not set: every call is then `InternalUnavailable`.
    public init(service: String, baseURL: URL, tokens: ServiceTokenSource?, http: HTTPClient, timeout: Duration = .seconds(10),
                maximumAnswer: Int = 4 << 20) {
        self.service = service
        self.baseURL = baseURL.absoluteString.trimmingSuffix("/")
        self.tokens = tokens
        self.http = http
        self.timeout = timeout
        self.maximumAnswer = maximumAnswer
    }

    /// Calls `route` with `body` (JSON) and `query` (already in the order given), by `deadline` at the latest.
    public func call<Body, Answer>(_ route: InternalRoute<Body, Answer>, _ body: Body, query: [(String, String)] = [],
                                   deadline: ContinuousClock.Instant? = nil) async throws -> Answer {
        precondition(route.service == service, "\(route.path) is \(route.service)'s route, not \(service)'s")
        guard let tokens else {
            throw InternalUnavailable(service: service, reason: "SERVICE_SECRET is not set, so this service cannot call \(service)")
        }
        var components = URLComponents()
        components.queryItems = query.isEmpty ? nil : query.map { URLQueryItem(name: $0.0, value: $0.1) }
        var request = HTTPClientRequest(url: baseURL + route.path + (components.percentEncodedQuery.map { "?" + $0 } ?? ""))
        request.method = .init(rawValue: route.method)
        if route.method != "GET" {
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(body)))
        }
        let ends = min(deadline ?? .now + timeout, .now + timeout)
        for attempt in 1...2 {
            let token: String
            do { token = try await tokens.token() } catch {
                throw InternalUnavailable(service: service, reason: "no service token: \(error)")
            }
            request.headers.replaceOrAdd(name: "authorization", value: "Bearer \(token)")
            let left = ends - .now
            guard left > .zero else { throw InternalUnavailable(service: service, reason: "no time left for the call") }
            let response: HTTPClientResponse
            let answer: ByteBuffer
            do {
                response = try await http.execute(request, timeout: .nanoseconds(left.nanoseconds))
                answer = try await response.body.collect(upTo: maximumAnswer)
            } catch {
                throw InternalUnavailable(service: service, reason: "\(service) unreachable: \(error)")
            }
            let status = Int(response.status.code)
            switch status {
            case 200..<300:
                do { return try route.decode(Data(buffer: answer)) } catch {
                    throw InternalUnavailable(service: service, reason: "\(service) answered \(route.path) out of contract: \(error)")
                }
            case 401 where attempt == 1:
                await tokens.invalidate(token)
                continue
            case 400..<500 where status != 401 && status != 403 && status != 408 && status != 429:
                let problem = (try? JSONDecoder().decode(Problem.self, from: answer))
                    ?? Problem(status: status, code: "internal_refusal", title: "Refused", detail: String(buffer: answer).prefix(200).description)
                throw InternalRefusal(service: service, problem: problem)
            default:
                throw InternalUnavailable(service: service, reason: "\(service) answered \(status): \(String(buffer: answer).prefix(200))",
                                          retryAfter: RetryAfter.parse(response.headers.first(name: "retry-after")))
            }
        }
        throw InternalUnavailable(service: service, reason: "\(service) refused this service's token twice")
    }
}

extension InternalClient {
    /// A `GET` route.
    public func call<Answer>(_ route: InternalRoute<NoBody, Answer>, query: [(String, String)] = [],
                             deadline: ContinuousClock.Instant? = nil) async throws -> Answer {
        try await call(route, NoBody(), query: query, deadline: deadline)
    }
}

/// The callee could not answer: the caller's request gets a 503 (`<service>_unavailable`), nothing is recorded.
public struct InternalUnavailable: Error, CustomStringConvertible, Sendable {
    public var service: String
    public var reason: String
    public var retryAfter: Duration?
    public var description: String { reason }

    public init(service: String, reason: String, retryAfter: Duration? = nil) {
        self.service = service
        self.reason = reason
        self.retryAfter = retryAfter
    }
}

/// The callee refused the request with a problem (4xx): its verdict on what the caller passed on.
public struct InternalRefusal: Error, CustomStringConvertible, Sendable {
    public var service: String
    public var problem: Problem
    public var description: String { "\(service) refused (\(problem.status) \(problem.code)): \(problem.detail ?? "")" }

    /// The refusal as the caller's own 422, each field named under `prefix` (`birth.date`): what the app sent and
    /// the caller passed on is what was wrong. A refusal without field errors is one error on `prefix` itself.
    public func invalid(under prefix: String) -> Problem {
        let errors = (problem.errors ?? []).map { Problem.FieldError(field: prefix + "." + $0.field, message: $0.message) }
        return errors.isEmpty ? Problem.invalid(field: prefix, problem.detail ?? "is not valid") : Problem.invalid(errors)
    }
}
