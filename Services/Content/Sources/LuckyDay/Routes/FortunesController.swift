import ContentKit
import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP
import LanternService
import LanternLLM
import Metrics

/// Lucky Day: `/v1/fortunes/profile`, `/v1/fortunes/today`, `/v1/fortunes/today/break` and `/v1/widgets/luckyday`.
struct FortunesController: Sendable {
    let luckyDay: LuckyDay

    // MARK: Bodies

    struct ProfileRequest: Decodable {
        var birth: BirthBody?
        /// The device's IANA time zone (local days, reminder hours).
        var timeZone: String?
    }

    struct ProfileBody: Encodable, Sendable {
        struct Zodiac: Encodable, Sendable {
            var animal: String
            var element: String
            var sign: String
            /// Which year the sign is: the lunar year, not the year pillar's (Req 3.2).
            var reckoning = "The sign is the lunar year's, which begins at the lunar new year; the year pillar counts from Li Chun, as Ba Zi does."
        }
        var zodiac: Zodiac
        var nickname: String
        var dayMaster: String
        var pillars: [LuckyProfile.Pillar]
        var elements: [String: Int]
        var essence: [String]
        var birthTimeKnown: Bool
        var limitations: [String]
        /// The texts were not written by a model (the app may show its "artisanal" note).
        var artisanal: Bool
        var timeZone: String
        var updatedAt: Date

        init(_ profile: LuckyProfile) {
            zodiac = Zodiac(animal: profile.zodiacAnimal, element: profile.yearElement, sign: "\(profile.yearElement) \(profile.zodiacAnimal)")
            nickname = profile.nickname
            dayMaster = profile.dayMaster
            pillars = profile.pillars
            elements = profile.elements
            essence = profile.essence
            birthTimeKnown = profile.birthTimeKnown
            limitations = profile.limitations
            artisanal = profile.textsArtisanal
            timeZone = profile.timeZone
            updatedAt = profile.updatedAt
        }
    }

    struct BreakRequest: Decodable {
        var timeZone: String?
        /// When the cookie was opened, if offline (the app showed a stored fortune): the 24-hour lock starts then.
        var openedAt: Date?
    }

    /// How long after an offline opening the app may still record it: the lock it starts lasts that long.
    static let offlineWindow: TimeInterval = 24 * 3600

    struct FortuneBody: Encodable, Sendable {
        /// Lower case, like every id of the API.
        var id: String
        var text: String
        /// Not written by a model ("fortuna artigianale", Req 2.3).
        var artisanal: Bool
        var revealedAt: Date
    }

    /// The cookie as the app and the widget show it.
    struct CookieBody: Encodable, Sendable {
        /// `closed` (ready to break) or `opened`.
        var state: String
        var fortune: FortuneBody?
        /// When the next cookie can be broken (only while `opened`).
        var opensAgainAt: Date?

        init(_ cookie: DailyCookie) {
            switch cookie {
            case .closed:
                state = "closed"
            case .opened(let fortune):
                state = "opened"
                self.fortune = FortuneBody(id: fortune.id.uuidString.lowercased(), text: fortune.text, artisanal: fortune.artisanal, revealedAt: fortune.revealedAt)
                opensAgainAt = fortune.opensAgainAt
            }
        }
    }

    // MARK: Routes

    /// Mounted at `/v1/fortunes`.
    var fortunes: RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.get("profile", use: profile)
        routes.put("profile", use: saveProfile)
        routes.get("today", use: today)
        routes.post("today/break", use: breakCookie)
        return routes
    }

    /// Mounted at `/v1/widgets/luckyday`.
    var widget: RouteCollection<LanternRequestContext> {
        RouteCollection(context: LanternRequestContext.self).get(use: widgetState)
    }

    @Sendable func profile(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<ProfileBody> {
        guard let profile = try await luckyDay.records.profile(of: try user(context)) else {
            throw Problem.notFound("No Lucky Day profile yet: PUT /v1/fortunes/profile with the birth data.", code: "profile_not_found")
        }
        return JSONResponse(ProfileBody(profile))
    }

    @Sendable func saveProfile(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<ProfileBody> {
        let user = try user(context)
        let body = try await request.decodeJSON(as: ProfileRequest.self, context: context)
        var v = FieldValidator()
        BirthBody.check(body.birth, &v)
        if let zone = body.timeZone { v.check(TimeZoneName.isValid(zone), "timeZone", "must be an IANA time zone such as Europe/Rome") }
        else { v.fail("timeZone", "is required: the device's IANA time zone, such as Europe/Rome") }
        try v.validate()
        guard let birth = body.birth, let date = birth.date, let place = birth.place, let zone = body.timeZone else { throw Problem.invalid([]) }
        do {
            let profile = try await luckyDay.saveProfile(user: user, birth: BirthData(date: date, time: birth.time, place: place), timeZone: zone)
            Counter(label: "lantern_luckyday_profiles_saved_total", dimensions: [("artisanal", String(profile.textsArtisanal))]).increment()
            return JSONResponse(ProfileBody(profile))
        } catch let unavailable as InternalUnavailable {
            context.logger.warning("profile not computed", metadata: ["reason": "\(unavailable)"])
            throw Problem(status: 503, code: "astrology_unavailable", title: "Service unavailable",
                          detail: "The pillars cannot be computed right now; try again in a minute.", retryAfter: 30)
        }
    }

    @Sendable func today(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<CookieBody> {
        JSONResponse(CookieBody(try await luckyDay.today(user: try user(context))))
    }

    @Sendable func breakCookie(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<CookieBody> {
        let user = try user(context)
        let key = try IdempotencyKey.of(request)
        let body = try await request.decodeJSONIfPresent(as: BreakRequest.self, context: context)
        var v = FieldValidator()
        if let zone = body?.timeZone { v.check(TimeZoneName.isValid(zone), "timeZone", "must be an IANA time zone such as Europe/Rome") }
        if let openedAt = body?.openedAt {
            let now = luckyDay.clock.now()
            v.check(openedAt <= now.addingTimeInterval(300), "openedAt", "is more than 5 minutes ahead of the server's clock")
            v.check(openedAt >= now.addingTimeInterval(-Self.offlineWindow), "openedAt",
                    "is more than 24 hours ago: a cookie opened offline is recorded within the day its lock lasts")
        }
        try v.validate()
        switch try await luckyDay.breakCookie(user: user, key: key, timeZone: body?.timeZone, openedAt: body?.openedAt) {
        case .revealed(let fortune):
            // Anonymous counters only (Req 9.4): how many, and how many were not written by a model.
            Counter(label: "lantern_luckyday_fortunes_revealed_total", dimensions: [("artisanal", String(fortune.artisanal))]).increment()
            return JSONResponse(CookieBody(.opened(fortune)))
        case .repeated(let fortune):
            return JSONResponse(CookieBody(.opened(fortune)))
        case .locked(let opensAgainAt):
            throw Problem(status: 409, code: "cookie_not_ready", title: "Conflict",
                          detail: "Today's cookie is already broken; the next one opens at \(opensAgainAt.formatted(.iso8601)).",
                          retryAfter: max(1, Int(opensAgainAt.timeIntervalSince(luckyDay.clock.now()).rounded(.up))),
                          extensions: ["opensAgainAt": .string(opensAgainAt.formatted(.iso8601))])
        case .noProfile:
            throw Problem.conflict("Create the Lucky Day profile first: PUT /v1/fortunes/profile.", code: "profile_required")
        case .keyReused:
            throw Problem.invalid(field: "Idempotency-Key", "was used for an earlier cookie; send a new key for each break",
                                  code: "idempotency_key_reused")
        case .duplicateText:
            throw Problem(status: 503, code: "fortune_unavailable", title: "Service unavailable",
                          detail: "No new fortune could be found right now; try again.", retryAfter: 5)
        }
    }

    /// The widget (Req 5, 7): the cookie's state in one small answer with an ETag. An open cookie does not change
    /// until it closes again, so it may be cached until then; a closed one changes when broken, so it is revalidated.
    @Sendable func widgetState(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let cookie = try await luckyDay.today(user: try user(context))
        var cacheControl = "private, no-cache"
        if case .opened(let fortune) = cookie {
            let seconds = Int(fortune.opensAgainAt.timeIntervalSince(luckyDay.clock.now()))
            if seconds > 0 { cacheControl = "private, max-age=\(min(seconds, 86_400))" }
        }
        return try ConditionalResponse.json(CookieBody(cookie), for: request, cacheControl: cacheControl)
    }

    private func user(_ context: LanternRequestContext) throws -> UUID {
        try context.requireUser(of: .luckyday, otherwise: .forbidden("Fortunes are a Lucky Day feature.", code: "fortunes_not_available"))
    }
}
