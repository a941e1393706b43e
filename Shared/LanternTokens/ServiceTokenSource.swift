import AsyncHTTPClient
import Foundation
import LanternContracts
import LanternCore
import NIOCore
import NIOFoundationCompat

/// A service's own token for other services' `/internal/…` routes, obtained from identity with the service's
/// secret (client credentials) and reused until a minute before it expires (`TokenCache`).
public struct ServiceTokenSource: Sendable {
    /// The calling service's name, as identity knows it.
    public let service: String
    private let cache: TokenCache

    public init(identity: URL, service: String, secret: String, http: HTTPClient = .shared, clock: WallClock = .system) {
        self.service = service
        self.cache = TokenCache(clock: clock) {
            try await Self.fetch(identity: identity, service: service, secret: secret, http: http, clock: clock)
        }
    }

    /// A token valid for at least another minute.
    public func token() async throws -> String { try await cache.token() }

    /// Forget `token` (a service answered 401 with it: the key may have rotated).
    public func invalidate(_ token: String? = nil) async { await cache.invalidate(token) }

    private static func fetch(identity: URL, service: String, secret: String, http: HTTPClient, clock: WallClock) async throws -> (token: String, expiresAt: Date) {
        var request = HTTPClientRequest(url: identity.absoluteString.trimmingSuffix("/") + IdentityEndpoint.serviceTokenPath)
        request.method = .POST
        request.headers.add(name: "authorization", value: "Basic " + Data("\(service):\(secret)".utf8).base64EncodedString())
        let response = try await http.execute(request, timeout: .seconds(5))
        let body = try await response.body.collect(upTo: 64 * 1024)
        guard response.status == .ok else {
            throw ServiceTokenUnavailable(status: Int(response.status.code), detail: String(buffer: body).prefix(200).description)
        }
        let answer = try JSONDecoder().decode(ServiceTokenResponse.self, from: body)
        return (answer.accessToken, clock.now().addingTimeInterval(TimeInterval(answer.expiresIn)))
    }
}

/// identity did not give a service token (wrong secret: 401; identity down: a transport error instead).
public struct ServiceTokenUnavailable: Error, CustomStringConvertible {
    public var status: Int
    public var detail: String
    public var description: String { "identity refused a service token (\(status)): \(detail)" }
}
