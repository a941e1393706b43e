import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Adds `Authorization: Bearer <access token>` to every request that has no `Authorization` of its own. The token
/// comes from the app each time (it is refreshed every 15 minutes), so the client is made once.
public struct BearerToken: ClientMiddleware {
    let token: @Sendable () async throws -> String?

    public init(_ token: @escaping @Sendable () async throws -> String?) { self.token = token }

    public func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                          next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if request.headerFields[.authorization] == nil, let token = try await token() {
            request.headerFields[.authorization] = "Bearer \(token)"
        }
        return try await next(request, body, baseURL)
    }
}
