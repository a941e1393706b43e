import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP

/// `/v1/me` and `/v1/me/devices/{deviceId}`: the signed-in user's profile and push registrations.
struct MeController: Sendable {
    let accounts: AccountStore
    let devices: DeviceStore

    struct ProfilePatch: Decodable {
        var displayName: String?
        var timeZone: String?
        var locale: String?
    }

    struct DeviceRegistration: Decodable {
        var platform: String
        var pushToken: String
        var app: String?
        var locale: String?
        var timeZone: String?
    }

    /// `/v1/me`: the profile, account deletion, push registrations.
    var endpoints: RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.get(use: me)
        routes.patch(use: patch)
        routes.delete(use: delete)
        routes.put("devices/:deviceId", use: putDevice)
        routes.delete("devices/:deviceId", use: deleteDevice)
        return routes
    }

    @Sendable func me(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<User> {
        JSONResponse(try await currentUser(context))
    }

    @Sendable func patch(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<User> {
        let id = try userID(context)
        let body = try await request.decodeJSON(as: ProfilePatch.self, context: context)
        var validator = FieldValidator()
        var changes = ProfileChanges()
        if let name = body.displayName {
            switch DisplayName.validate(name) {
            case .success(let valid): changes.displayName = valid
            case .failure(let message): validator.fail("displayName", message)
            }
        }
        if let zone = body.timeZone {
            if TimeZoneName.isValid(zone) { changes.timeZone = zone } else { validator.fail("timeZone", "must be an IANA time zone such as Europe/Kyiv") }
        }
        if let locale = body.locale {
            if Locales.isValid(locale) { changes.locale = locale } else { validator.fail("locale", "must be a language tag such as en, uk or vi-VN") }
        }
        try validator.validate()
        guard let user = try await accounts.updateProfile(id, changes) else { throw Problem.accountDeleted }
        return JSONResponse(user)
    }

    @Sendable func delete(_ request: Request, context: LanternRequestContext) async throws -> Response {
        guard try await accounts.deleteUser(try userID(context)) else { throw Problem.accountDeleted }
        return Response(status: .noContent)
    }

    @Sendable func putDevice(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<Device> {
        let user = try await currentUser(context)
        let deviceID = context.parameters.get("deviceId") ?? ""
        let body = try await request.decodeJSON(as: DeviceRegistration.self, context: context)
        var validator = FieldValidator()
        validator.check(DeviceRules.isDeviceID(deviceID), "deviceId", "must be 1–128 characters of letters, digits, '.', '_', ':' or '-'")
        validator.check(["ios", "android"].contains(body.platform), "platform", "must be ios or android")
        validator.check(DeviceRules.isPushToken(body.pushToken, platform: body.platform), "pushToken",
                        body.platform == "ios" ? "must be the APNs device token in hex (64–200 characters)" : "must be the FCM registration token (1–4096 characters)")
        if let app = body.app { validator.check(app == user.app, "app", "must be the app of this account (\(user.app))") }
        if let locale = body.locale { validator.check(Locales.isValid(locale), "locale", "must be a language tag such as en, uk or vi-VN") }
        if let zone = body.timeZone { validator.check(TimeZoneName.isValid(zone), "timeZone", "must be an IANA time zone such as Europe/Kyiv") }
        try validator.validate()
        guard let app = AppID(rawValue: user.app) else { throw Problem.accountDeleted }
        let device = Device(deviceId: deviceID, app: user.app, platform: body.platform, pushToken: body.pushToken,
                            locale: body.locale, timeZone: body.timeZone, updatedAt: Date())
        let (stored, created) = try await devices.upsertDevice(userID: try userID(context), app: app, device: device)
        return JSONResponse(stored, status: created ? .created : .ok)
    }

    @Sendable func deleteDevice(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let id = try userID(context)
        _ = try await currentUser(context)  // a deleted account is a 401, not a missing device
        let deviceID = context.parameters.get("deviceId") ?? ""
        guard try await devices.removeDevice(userID: id, deviceID: deviceID) else {
            throw Problem.notFound("No device \(deviceID) is registered for this account.", code: "device_not_found")
        }
        return Response(status: .noContent)
    }

    private func userID(_ context: LanternRequestContext) throws -> UUID {
        guard let id = try context.requireAuth().userID else { throw Problem.forbidden("This route is for user tokens.") }
        return id
    }

    private func currentUser(_ context: LanternRequestContext) async throws -> User {
        guard let user = try await accounts.user(try userID(context)) else { throw Problem.accountDeleted }
        return user
    }
}
