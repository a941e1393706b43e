import Foundation
import HTTPTypes
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP

/// `POST /internal/auth/service-token`: a service proves itself with its secret (HTTP Basic, OAuth 2.0
/// `client_secret_basic`) and gets a short-lived service token. The gateway never forwards `/internal`.
struct ServiceTokensController: Sendable {
    let clients: ServiceClients
    let keys: SigningKeys

    var endpoints: RouteCollection<LanternRequestContext> {
        RouteCollection(context: LanternRequestContext.self).post(use: issue)
    }

    @Sendable func issue(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<ServiceTokenResponse> {
        guard let service = clients.authenticate(basicAuthorization: request.headers[.authorization]) else {
            // RFC 6749 §5.2: a client that failed to authenticate is told so with a challenge.
            throw Problem.unauthorized("The service name or secret is wrong (SERVICE_SECRETS).", code: "invalid_client")
        }
        let issuer = try await keys.issuer()
        context.logger.info("service token issued", metadata: ["service": "\(service)"])
        return JSONResponse(ServiceTokenResponse(accessToken: try await issuer.issueServiceToken(service: service),
                                                 expiresIn: Int(issuer.lifetime)))
    }
}
