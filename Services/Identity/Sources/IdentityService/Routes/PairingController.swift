import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP

/// `/v1/pairing…`: Pairly's invite codes and partnership.
struct PairingController: Sendable {
    let pairing: PairingStore

    struct JoinRequest: Decodable {
        var code: String
    }

    /// `/v1/pairing`: the partnership, invites, joining, disconnecting.
    var endpoints: RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.get(use: current)
        routes.delete(use: disconnect)
        routes.post("invites", use: invite)
        routes.post("join", use: join)
        return routes
    }

    /// `/internal/realtime/state`: the `pairing` of Pairly's first real-time frame (`GET /v1/pairing`'s answer, or
    /// `null` when not paired).
    var realtimeState: RouteCollection<LanternRequestContext> {
        RouteCollection(context: LanternRequestContext.self).get(use: realtimeState)
    }

    @Sendable func realtimeState(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<[String: JSONValue]> {
        let claims = try context.requireAuth()
        guard claims.app == AppID.pairly.rawValue, let user = claims.userID else { return JSONResponse([:]) }
        return JSONResponse([RealtimeState.pairlyPairing.name: try await pairing.partnership(of: user).map(JSONValue.init(encoding:)) ?? .null])
    }

    @Sendable func invite(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<Invite> {
        let userID = try pairlyUser(context)
        do {
            let (invite, created) = try await pairing.invite(for: userID)
            return JSONResponse(invite, status: created ? .created : .ok)
        } catch let failure as JoinFailure {
            throw Self.problem(failure)
        }
    }

    @Sendable func join(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<Partnership> {
        let userID = try pairlyUser(context)
        let body = try await request.decodeJSON(as: JoinRequest.self, context: context)
        guard let code = InviteCode.normalize(body.code) else {
            throw Problem.invalid(field: "code", "must be the 6-character invite code (letters and digits)", code: "invite_code_malformed")
        }
        do {
            return JSONResponse(try await pairing.join(userID: userID, code: code), status: .created)
        } catch let failure as JoinFailure {
            throw Self.problem(failure)
        }
    }

    @Sendable func current(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<Partnership> {
        guard let partnership = try await pairing.partnership(of: try pairlyUser(context)) else {
            throw Problem.notFound("You are not paired yet: share your invite code or enter your partner's.", code: "not_paired")
        }
        return JSONResponse(partnership, headers: [.cacheControl: "private, no-cache"])
    }

    @Sendable func disconnect(_ request: Request, context: LanternRequestContext) async throws -> Response {
        guard try await pairing.dissolve(userID: try pairlyUser(context), reason: "disconnected") else {
            throw Problem.notFound("You are not paired.", code: "not_paired")
        }
        return Response(status: .noContent)
    }

    private func pairlyUser(_ context: LanternRequestContext) throws -> UUID {
        try context.requireUser(of: .pairly, otherwise: .forbidden("Pairing is a Pairly feature.", code: "pairing_not_available"))
    }

    static func problem(_ failure: JoinFailure) -> Problem {
        switch failure {
        case .unknown:
            return .notFound("No invite with this code exists; check the code with your partner.", code: "invite_code_not_found")
        case .expired:
            return Problem(status: 410, code: "invite_code_expired", title: "Invite code expired",
                           detail: "This code is older than 24 hours; ask your partner for a new one.")
        case .used:
            return .conflict("This code has already been used.", code: "invite_code_used")
        case .ownCode:
            return .invalid(field: "code", "is your own invite code; enter your partner's", code: "invite_code_own")
        case .alreadyPaired:
            return .conflict("You are already paired; disconnect first.", code: "already_paired")
        case .partnerAlreadyPaired:
            return .conflict("The owner of this code is already paired with someone else.", code: "partner_already_paired")
        case .accountDeleted:
            return .accountDeleted
        }
    }
}
