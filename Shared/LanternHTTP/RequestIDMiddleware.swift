import Foundation
import HTTPTypes
import Hummingbird
import LanternCore
import Logging

extension HTTPField.Name {
    public static let requestID = Self("X-Request-Id")!
    public static let idempotencyKey = Self("Idempotency-Key")!
}

/// Gives each request an id (the caller's `X-Request-Id` if sane, else a new one), puts it in every log line and
/// echoes it in the response, so one request can be followed from the gateway through every service. (The access
/// line is `RequestMetrics`'s, which knows the route.)
public struct RequestIDMiddleware: RouterMiddleware {
    public typealias Context = LanternRequestContext
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let id = Self.id(from: request.headers[.requestID])
        context.requestID = id
        // One request id per line: ours (the one the response and the services carry), not Hummingbird's own too.
        context.logger[metadataKey: "hb.request.id"] = nil
        context.logger[metadataKey: "request_id"] = .string(id)
        var response = try await next(request, context)
        response.headers[.requestID] = id
        return response
    }

    /// The caller's id if sane, else a new one.
    public static func id(from incoming: String?) -> String {
        if let incoming, isSane(incoming) { return incoming }
        return UUID().lowercased
    }

    static func isSane(_ id: String) -> Bool {
        id.utf8.count <= 128 && id.isASCIIIdentifier(allowing: "-_")
    }
}
