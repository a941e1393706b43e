import Foundation
import HTTPTypes
import Hummingbird
import Logging

extension HTTPField.Name {
    public static let requestID = Self("X-Request-Id")!
    public static let idempotencyKey = Self("Idempotency-Key")!
}

/// Gives each request an id (the caller's `X-Request-Id` if sane, else a new one), puts it in every log line and
/// echoes it in the response, so one request can be followed from the gateway through every service.
public struct RequestIDMiddleware: RouterMiddleware {
    public typealias Context = LanternRequestContext
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let id: String
        if let incoming = request.headers[.requestID], Self.isSane(incoming) {
            id = incoming
        } else {
            id = UUID().uuidString.lowercased()
        }
        context.requestID = id
        context.logger[metadataKey: "request_id"] = .string(id)
        let started = ContinuousClock.now
        var response = try await next(request, context)
        response.headers[.requestID] = id
        let elapsed = ContinuousClock.now - started
        context.logger.debug("request", metadata: [
            "method": "\(request.method)", "path": "\(request.uri.path)", "status": "\(response.status.code)",
            "ms": "\(elapsed.inSeconds * 1000)",
        ])
        return response
    }

    static func isSane(_ id: String) -> Bool {
        id.count <= 128 && id.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == "-" || scalar == "_")
        }
    }
}
