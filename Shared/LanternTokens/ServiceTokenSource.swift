import AsyncHTTPClient
import Foundation
import LanternContracts
import LanternCore
import NIOCore
import NIOFoundationCompat

/// A service's own token for other services' `/internal/…` routes, obtained from identity with the service's
/// secret (client credentials) and reused until a minute before it expires. Concurrent callers share one fetch.
public actor ServiceTokenSource {
    let identity: URL
    let service: String
    let secret: String
    let http: HTTPClient
    let clock: WallClock
    private var current: (token: String, expiresAt: Date)?
    private var pending: Task<(String, Date), any Error>?

    public init(identity: URL, service: String, secret: String, http: HTTPClient = .shared, clock: WallClock = .system) {
        self.identity = identity
        self.service = service
        self.secret = secret
        self.http = http
        self.clock = clock
    }

    /// A token valid for at least another minute.
    public func token() async throws -> String {
        if let current, current.expiresAt.timeIntervalSince(clock.now()) > 60 { return current.token }
        if let pending { return try await pending.value.0 }
        let task = Task { try await self.fetch() }
        pending = task
        defer { pending = nil }
        let (token, expiresAt) = try await task.value
        current = (token, expiresAt)
        return token
    }

    /// Forget the token (a service answered 401 with it: the key may have rotated).
    public func invalidate() { current = nil }

    private func fetch() async throws -> (String, Date) {
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
