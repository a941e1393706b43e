import HTTPTypes
import Hummingbird
import LanternCore

extension AllowedHosts {
    /// The `Host` values of `head`: the authority (HTTP/1's first `Host`, HTTP/2's `:authority`) and any further
    /// `Host` field, which HTTP/1 leaves among the fields.
    public static func hosts(of head: HTTPRequest) -> [String] {
        (head.authority.map { [$0] } ?? []) + head.headerFields[values: hostField]
    }

    static let hostField = HTTPField.Name("Host")!
}

/// Answers 421 (`AllowedHosts.refusal(_:)`) to a request whose `Host` is not one of `hosts`: the first middleware of
/// both routers of every process (`ServiceRouter`) and of the development identity provider. Add it before the
/// routes it guards: Hummingbird applies a middleware to the routes added after it (and to the not-found answer).
public struct AllowedHostsMiddleware: RouterMiddleware {
    public typealias Context = LanternRequestContext
    public let hosts: AllowedHosts

    public init(_ hosts: AllowedHosts) { self.hosts = hosts }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let named = AllowedHosts.hosts(of: request.head)
        guard hosts.admits(named) else { throw hosts.refusal(named) }
        return try await next(request, context)
    }
}
