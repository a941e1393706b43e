import Hummingbird
import LanternCore
import LanternTokens

/// Admits an operator API's requests: `Authorization: Bearer <secret>` of one of `keys`, and records the
/// operator's name in the context (`context.operatorName`) for the audit trail. Anything else — no header, an
/// app's access token, a wrong secret, or no keys configured at all — is 401.
public struct RequireOperatorKey: RouterMiddleware {
    public typealias Context = LanternRequestContext
    let keys: OperatorKeys
    let realm: String

    public init(keys: OperatorKeys, realm: String) {
        self.keys = keys
        self.realm = realm
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let secret: String
        do { secret = try RequireAccessToken.bearerToken(request) } catch {
            return refusal("Send an operator key: Authorization: Bearer <key>.", code: "missing_operator_key")
        }
        guard let name = keys.operatorName(for: secret) else {
            return refusal(keys.isEmpty ? "No operator keys are configured for \(realm)." : "This is not an operator key of \(realm).",
                          code: "invalid_operator_key")
        }
        var context = context
        context.operatorName = name
        context.logger[metadataKey: "operator"] = .string(name)
        return try await next(request, context)
    }

    /// A 401 with the challenge RFC 9110 asks of it, answered here (a thrown problem would lose the header).
    private func refusal(_ detail: String, code: String) -> Response {
        var response = Problem.unauthorized(detail, code: code).response()
        response.headers[.wwwAuthenticate] = "Bearer realm=\"\(realm)\""
        return response
    }
}
