import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP

/// The Chinese and Vietnamese lunisolar calendars: a Gregorian date as a lunar one, back, and a year's festivals.
struct CalendarController: Sendable {
    let calendars: LunisolarCalendars
    let festivals: Festivals

    struct LunarAnswer: Encodable, Sendable {
        var calendar: LunisolarCalendar
        var gregorian: String
        var lunar: LunisolarCalendar.LunarDate
        var yearPillar: String
        var animal: String
    }

    /// `calendar/lunar`, `calendar/gregorian` and `calendar/festivals`; mounted for apps at `/v1/astrology` and for
    /// services at `/internal/astrology`.
    var endpoints: RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.get("calendar/lunar", use: lunar)
        routes.get("calendar/gregorian", use: gregorian)
        routes.get("calendar/festivals", use: festivals)
        return routes
    }

    @Sendable func festivals(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<FestivalCalendar> {
        var v = FieldValidator()
        let calendar = Self.calendar(request, &v)
        let year = request.uri.queryParameters["year"].flatMap { Int(String($0)) }
        v.check(year.map { (1900...2100).contains($0) } ?? false, "year", "must be a year from 1900 to 2100")
        try v.validate()
        guard let calendar, let year else { throw Problem.badRequest("incomplete query") }
        return JSONResponse(try await festivals.of(year, calendar))
    }

    @Sendable func lunar(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<LunarAnswer> {
        var v = FieldValidator()
        let calendar = Self.calendar(request, &v)
        let date = Self.date(request.uri.queryParameters["date"].map(String.init), &v)
        try v.validate()
        guard let calendar, let date else { throw Problem.badRequest("incomplete query") }
        let lunar = try await calendars.lunarDate(of: date, calendar)
        let pillar = Pillar(index: lunar.year - 4)
        return JSONResponse(LunarAnswer(calendar: calendar, gregorian: date.description, lunar: lunar, yearPillar: pillar.name, animal: pillar.branch.animal))
    }

    @Sendable func gregorian(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<LunarAnswer> {
        var v = FieldValidator()
        let calendar = Self.calendar(request, &v)
        let query = request.uri.queryParameters
        let year = query["year"].flatMap { Int(String($0)) }
        v.check(year.map { (1900...2100).contains($0) } ?? false, "year", "must be a lunar year from 1900 to 2100")
        let month = query["month"].flatMap { Int(String($0)) }
        v.check(month.map { (1...12).contains($0) } ?? false, "month", "must be 1–12")
        let day = query["day"].flatMap { Int(String($0)) }
        v.check(day.map { (1...30).contains($0) } ?? false, "day", "must be 1–30")
        let leapText = query["leap"].map(String.init) ?? "false"
        v.check(["true", "false"].contains(leapText), "leap", "must be true or false")
        try v.validate()
        guard let calendar, let year, let month, let day else { throw Problem.badRequest("incomplete query") }
        guard let date = try await calendars.gregorian(year: year, month: month, leap: leapText == "true", day: day, calendar) else {
            throw Problem.invalid(field: leapText == "true" ? "leap" : "day", "\(year) has no \(leapText == "true" ? "leap " : "")month \(month) with a day \(day) in the \(calendar.rawValue) calendar",
                                  code: "no_such_lunar_date")
        }
        let lunar = try await calendars.lunarDate(of: date, calendar)
        let pillar = Pillar(index: year - 4)
        return JSONResponse(LunarAnswer(calendar: calendar, gregorian: date.description, lunar: lunar, yearPillar: pillar.name, animal: pillar.branch.animal))
    }

    static func calendar(_ request: Request, _ v: inout FieldValidator) -> LunisolarCalendar? {
        let value = LunisolarCalendar(rawValue: request.uri.queryParameters["calendar"].map(String.init) ?? "chinese")
        v.check(value != nil, "calendar", "must be chinese or vietnamese")
        return value
    }

    static func date(_ text: String?, _ v: inout FieldValidator) -> CivilDate? {
        let date = text.flatMap(CivilDate.init(parsing:))
        v.check(date != nil, "date", "must be a real date YYYY-MM-DD between 1900-01-01 and 2100-12-31")
        return date
    }
}
