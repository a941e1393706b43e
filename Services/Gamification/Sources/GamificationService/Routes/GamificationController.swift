import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP

/// `/v1/gamification`: check-ins, the streak freeze, reminders, the profile and the export, for the user of any
/// app that has a catalogue (RoastMeLater today); another app's user gets 403 `gamification_not_available`.
struct GamificationController: Sendable {
    let streaks: Streaks
    let profiles: any ProfileRecords

    var achievements: Achievements { streaks.achievements }

    struct CheckInRequest: Decodable {
        /// When the app was opened, by the device's clock; default now.
        var occurredAt: Date?
        var timeZone: String?
    }

    struct CheckInBody: Encodable {
        var counted: Bool
        var outcome: String
        /// The local day the check-in is about (the app never recomputes it).
        var localDate: String
        var late: Bool
        var streak: StreakView
        var badgesEarned: [BadgeView]
        var rewardsUnlocked: [RewardView]
    }

    struct RemindersRequest: Decodable {
        var enabled: Bool?
        var timeZone: String?
    }

    struct FreezeBody: Encodable {
        var restoredDays: Int
        var streak: StreakView
    }

    struct ExportBody: Encodable {
        var app: String
        var exportedAt: Date
        var profile: Profile
        var checkIns: [ExportData.CheckInRecord]
        var counters: [CounterBody]
        var members: [ExportData.Member]
    }

    struct CounterBody: Encodable {
        var metric: String
        var subject: String?
        var value: Int
        var size: Int?
    }

    /// Mounted at `/v1/gamification`.
    var routes: RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.post("check-ins", use: checkIn)
        routes.post("streak/freeze", use: freeze)
        routes.get("profile", use: profile)
        routes.get("reminders", use: reminders)
        routes.put("reminders", use: setReminders)
        routes.get("export", use: export)
        return routes
    }

    @Sendable func checkIn(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<CheckInBody> {
        let (user, catalogue) = try caller(context)
        guard let key = try IdempotencyKey.of(request) else {
            throw Problem.invalid(field: "Idempotency-Key", "is required: a new key (a UUID) for each app open, the same one when retrying it")
        }
        let language = try Self.language(request, catalogue: catalogue)
        let body = try await request.decodeJSON(as: CheckInRequest.self, context: context)
        var v = FieldValidator()
        let zone = body.timeZone.flatMap(TimeZoneName.zone)
        if body.timeZone == nil { v.fail("timeZone", "is required: the IANA time zone the app was opened in, such as Asia/Ho_Chi_Minh") }
        else { v.check(zone != nil, "timeZone", "must be an IANA time zone such as Asia/Ho_Chi_Minh") }
        try v.validate()
        guard let zone else { throw Problem.invalid([]) }
        switch try await streaks.checkIn(user: user, app: catalogue.app, occurredAt: body.occurredAt, zone: zone, zoneName: body.timeZone, key: key) {
        case .erased:
            throw Problem.unauthorized("This account was deleted.", code: "account_deleted")
        case .outOfWindow(let tooLate):
            throw Problem.invalid(field: "occurredAt", tooLate
                ? "is more than 72 hours ago: a check-in may arrive late from an app that was offline, but not that late"
                : "is more than 5 minutes ahead of the server's clock", code: "check_in_out_of_window")
        case .done(let result):
            // As answered then: a retry under the same key gets the same streak, today and risk (the API's promise).
            let today = LocalDay(result.answeredAt ?? streaks.clock.now(), in: TimeZoneName.zone(result.zone) ?? zone)
            return JSONResponse(CheckInBody(
                counted: result.counted, outcome: result.outcome.rawValue, localDate: result.localDate.description, late: result.late,
                streak: StreakView(result.state, today: today, zone: result.zone),
                badgesEarned: result.badges.compactMap { earned in
                    catalogue.badges.first { $0.id == earned.badge }.map { badge in
                        BadgeView(id: badge.id, category: badge.category, icon: badge.icon, name: catalogue.text(badge.name, in: language),
                                  description: catalogue.text(badge.description, in: language), earned: true, earnedAt: earned.earnedAt,
                                  progress: 1, subject: earned.subject.isEmpty ? nil : earned.subject)
                    }
                },
                rewardsUnlocked: result.rewards.compactMap { id in
                    catalogue.rewards.first { $0.id == id }.map { reward in
                        RewardView(id: reward.id, name: catalogue.text(reward.name, in: language), description: catalogue.text(reward.description, in: language),
                                   unlocked: true, unlockedAt: nil, progress: 1, title: reward.title.map { catalogue.text($0, in: language) },
                                   flame: reward.flame ?? false)
                    }
                }))
        }
    }

    @Sendable func freeze(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<FreezeBody> {
        let (user, catalogue) = try caller(context)
        switch try await streaks.freeze(user: user, app: catalogue.app) {
        case .restored(let row, let days):
            let today = LocalDay(streaks.clock.now(), in: TimeZoneName.zone(row.zone) ?? .gmt)
            return JSONResponse(FreezeBody(restoredDays: days, streak: StreakView(row.state, today: today, zone: row.zone)))
        case .notOffered(let used):
            throw used
                ? Problem.conflict("The streak freeze was used already: it can be used once.", code: "freeze_used")
                : Problem.conflict("No streak freeze is on offer: it is offered after losing a streak of 7 days or more, until the next break.",
                                   code: "freeze_not_offered")
        }
    }

    @Sendable func profile(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let (user, catalogue) = try caller(context)
        let zone = try Self.zoneParameter(request)
        let data = try await profiles.profile(of: user, app: catalogue.app)
        let profile = Profile(data, catalogue: catalogue, language: try Self.language(request, catalogue: catalogue), zone: zone, now: streaks.clock.now())
        return try ConditionalResponse.json(profile, for: request, cacheControl: "private, no-cache")
    }

    @Sendable func reminders(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<Profile.Reminders> {
        let (user, catalogue) = try caller(context)
        let row = try await streaks.records.streak(of: user, app: catalogue.app, key: nil).row
        return JSONResponse(Profile.Reminders(enabled: row?.reminders ?? true, timeZone: row?.zone ?? "UTC", nextAt: row?.remindAt))
    }

    @Sendable func setReminders(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<Profile.Reminders> {
        let (user, catalogue) = try caller(context)
        let body = try await request.decodeJSON(as: RemindersRequest.self, context: context)
        var v = FieldValidator()
        if body.enabled == nil { v.fail("enabled", "is required: true or false") }
        if let zone = body.timeZone { v.check(TimeZoneName.isValid(zone), "timeZone", "must be an IANA time zone such as Asia/Ho_Chi_Minh") }
        try v.validate()
        let row = try await streaks.setReminders(user: user, app: catalogue.app, enabled: body.enabled ?? true, zone: body.timeZone)
        return JSONResponse(Profile.Reminders(enabled: row.reminders, timeZone: row.zone, nextAt: row.remindAt))
    }

    /// Everything gamification keeps about the user in this app, as one JSON file.
    @Sendable func export(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<ExportBody> {
        let (user, catalogue) = try caller(context)
        let data = try await profiles.export(of: user, app: catalogue.app)
        let now = streaks.clock.now()
        let profile = Profile(data.profile, catalogue: catalogue, language: try Self.language(request, catalogue: catalogue), zone: nil, now: now)
        return JSONResponse(ExportBody(app: catalogue.app.rawValue, exportedAt: now, profile: profile, checkIns: data.checkIns,
                                       counters: data.profile.counters.map { CounterBody(metric: $0.metric, subject: $0.subject.isEmpty ? nil : $0.subject,
                                                                                         value: $0.value, size: $0.size) },
                                       members: data.members),
                            headers: [.contentDisposition: "attachment; filename=\"\(catalogue.app.rawValue)-gamification.json\""])
    }

    /// The user and their app's catalogue: 403 for an app without one, 403 for a service token.
    private func caller(_ context: LanternRequestContext) throws -> (UUID, GameCatalogue) {
        let claims = try context.requireAuth()
        guard let app = claims.app.flatMap(AppID.init(rawValue:)), let catalogue = achievements.catalogues[app] else {
            throw Problem.forbidden("Streaks and badges are not part of this app.", code: "gamification_not_available")
        }
        guard let user = claims.userID else { throw Problem.forbidden("This route is for user tokens.") }
        return (user, catalogue)
    }

    /// `?language=`, else the first of `Accept-Language` the catalogue has, else its first language.
    static func language(_ request: Request, catalogue: GameCatalogue) throws -> String {
        if let given = request.uri.queryParameters["language"].map(String.init) {
            guard catalogue.languages.contains(given) else {
                throw Problem.invalid(field: "language", "must be one of \(catalogue.languages.joined(separator: ", "))")
            }
            return given
        }
        for part in (request.headers[.acceptLanguage] ?? "").split(separator: ",") {
            let tag = part.split(separator: ";")[0].trimmingCharacters(in: .whitespaces).lowercased().split(separator: "-").first.map(String.init) ?? ""
            if catalogue.languages.contains(tag) { return tag }
        }
        return catalogue.languages[0]
    }

    static func zoneParameter(_ request: Request) throws -> String? {
        guard let zone = request.uri.queryParameters["timeZone"].map(String.init) else { return nil }
        guard TimeZoneName.isValid(zone) else { throw Problem.invalid(field: "timeZone", "must be an IANA time zone such as Asia/Ho_Chi_Minh") }
        return zone
    }
}
