import Ephemeris
import Foundation
import Hummingbird
import LanternCore
import LanternHTTP

/// `POST /v1/astrology/bazi` (Four Pillars) and `GET /v1/astrology/calendar/{lunar,gregorian,festivals}`.
///
/// The Ba Zi answer carries descriptors only (pillars, elements, animals) besides what the client sent, so the
/// content service can build an LLM prompt from it without raw birth data.
struct ChineseController: Sendable {
    let ephemeris: SwissEphemeris
    let calendars: LunisolarCalendars
    let places: PlaceStore

    struct BaziRequest: Decodable {
        var date: String?
        var time: String?
        var place: ChartsController.Place?
        var fold: String?
        /// `23:00` (default) or `00:00`: when the day pillar changes.
        var dayBoundary: String?
        /// `clock` (default) or `true`: the hour pillar from the clock, or from true solar time at the birthplace.
        var solarTime: String?
    }

    struct PillarBody: Encodable {
        var role: String
        var meaning: String
        var stem: String
        var stemHanzi: String
        var branch: String
        var branchHanzi: String
        var animal: String
        var stemElement: Element
        var branchElement: Element
        var polarity: Polarity

        init(_ pillar: Pillar, role: String, meaning: String) {
            self.role = role
            self.meaning = meaning
            stem = pillar.stem.name
            stemHanzi = pillar.stem.hanzi
            branch = pillar.branch.name
            branchHanzi = pillar.branch.hanzi
            animal = pillar.branch.animal
            stemElement = pillar.stem.element
            branchElement = pillar.branch.element
            polarity = pillar.stem.polarity
        }
    }

    struct BaziResponse: Encodable, Sendable {
        var pillars: [PillarBody]
        var dayMaster: DayMaster
        var elements: [String: Int]
        /// The animal of the lunar year (changes at the lunar new year): what Lucky Day shows.
        var zodiacAnimal: String
        /// The animal of the year pillar (changes at Li Chun, about 4 February).
        var solarYearAnimal: String
        var lunarDate: LunisolarCalendar.LunarDate
        var options: Options
        var timeKnown: Bool
        var warnings: [ChartsController.Warning]

        struct DayMaster: Encodable { var stem: String; var element: Element; var polarity: Polarity }
        struct Options: Encodable { var dayBoundary: String; var solarTime: String }
    }

    /// The apps' routes under `/v1/astrology` (user tokens), and the same under `/internal/astrology` for other
    /// services (service tokens, audience `internal`): content builds Lucky Day prompts from Ba Zi descriptors,
    /// gamification dates seasonal collections by the Vietnamese festivals. The gateway never forwards `/internal`.
    /// Ba Zi and the lunisolar calendars; mounted for apps at `/v1/astrology` and for services at `/internal/astrology`.
    var endpoints: RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.post("bazi", use: bazi)
        routes.get("calendar/lunar", use: lunar)
        routes.get("calendar/gregorian", use: gregorian)
        routes.get("calendar/festivals", use: festivals)
        return routes
    }

    @Sendable func bazi(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<BaziResponse> {
        var body = try await request.decodeJSON(as: BaziRequest.self, context: context)
        body.place = try await body.place?.resolved(with: places)
        var v = FieldValidator()
        let boundary = FourPillars.DayBoundary(rawValue: body.dayBoundary ?? "23:00")
        v.check(boundary != nil, "dayBoundary", "must be 23:00 or 00:00")
        let solarTime = body.solarTime ?? "clock"
        v.check(["clock", "true"].contains(solarTime), "solarTime", "must be clock or true")
        let common = try ChartsController.validate(.init(date: body.date, time: body.time, place: body.place, fold: body.fold, orbs: nil), &v)
        let moment = common.moment
        let resolved = try moment.resolveForRequest(fold: common.fold)
        let longitude = common.place.longitude
        let instant = resolved.utc.timeIntervalSince1970 / 86_400 + 2_440_587.5
        // Year and month need only the Sun's 15° band at the instant: from the cached solar terms of the year.
        let sun = try await calendars.solarLongitudeBand(at: instant, year: moment.year) + 7.5
        let equation = solarTime == "true" ? try await ephemeris.compute { try $0.equationOfTime(julianDayUT: instant) } : 0
        // The date and hour the pillars read: the birthplace's clock, or its apparent solar time.
        var localDate = CivilDate(year: moment.year, month: moment.month, day: moment.day)
        var hour = moment.hour
        if solarTime == "true" {
            let solar = instant + longitude / 360 + equation
            localDate = CivilDate(julianDayUT: solar, offsetHours: 0)
            hour = Int(((solar + 0.5) - (solar + 0.5).rounded(.down)) * 24)
        }
        let pillars = FourPillars.compute(sunLongitude: sun, gregorianYear: localDate.year, localDate: localDate, hour: hour, dayBoundary: boundary ?? .zi2300)
        var list = [PillarBody(pillars.year, role: "year", meaning: "Destiny"), PillarBody(pillars.month, role: "month", meaning: "Environment"),
                    PillarBody(pillars.day, role: "day", meaning: "Essence")]
        if moment.timeKnown { list.append(PillarBody(pillars.hour, role: "hour", meaning: "Inner Heart")) }
        var elements = Dictionary(uniqueKeysWithValues: Element.allCases.map { ($0.rawValue, 0) })
        for p in list {
            elements[p.stemElement.rawValue, default: 0] += 1
            elements[p.branchElement.rawValue, default: 0] += 1
        }
        let lunar = try await calendars.lunarDate(of: CivilDate(year: moment.year, month: moment.month, day: moment.day), .chinese)
        var warnings: [ChartsController.Warning] = []
        if !moment.timeKnown {
            warnings.append(.init(code: "time_unknown", message: "No birth time: there is no hour pillar, and the day pillar assumes the birth was not between 23:00 and midnight."))
        }
        if let fold = resolved.ambiguity {
            let (code, message) = moment.ambiguityWarning(fold)
            warnings.append(.init(code: code, message: message))
        }
        return JSONResponse(BaziResponse(
            pillars: list, dayMaster: .init(stem: pillars.day.stem.name, element: pillars.day.stem.element, polarity: pillars.day.stem.polarity),
            elements: elements, zodiacAnimal: Branch(rawValue: ((lunar.year - 4) % 12 + 12) % 12)!.animal, solarYearAnimal: pillars.year.branch.animal,
            lunarDate: lunar, options: .init(dayBoundary: (boundary ?? .zi2300).rawValue, solarTime: solarTime), timeKnown: moment.timeKnown,
            warnings: warnings))
    }

    // MARK: Calendars

    struct LunarAnswer: Encodable, Sendable {
        var calendar: LunisolarCalendar
        var gregorian: String
        var lunar: LunisolarCalendar.LunarDate
        var yearPillar: String
        var animal: String
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

    struct Festival: Encodable, Sendable {
        var key: String
        var name: String
        var date: String
        /// `lunar` (a lunar date) or `solar` (a solar term).
        var kind: String
    }

    struct FestivalsAnswer: Encodable, Sendable {
        var calendar: LunisolarCalendar
        var year: Int
        var festivals: [Festival]
    }

    @Sendable func festivals(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<FestivalsAnswer> {
        var v = FieldValidator()
        let calendar = Self.calendar(request, &v)
        let year = request.uri.queryParameters["year"].flatMap { Int(String($0)) }
        v.check(year.map { (1900...2100).contains($0) } ?? false, "year", "must be a year from 1900 to 2100")
        try v.validate()
        guard let calendar, let year else { throw Problem.badRequest("incomplete query") }
        var list: [Festival] = []
        for f in Self.lunarFestivals[calendar] ?? [] {
            let date: CivilDate?
            if f.month == 12 && f.day == 0 {  // the last day of the 12th month: New Year's Eve
                date = try await calendars.newYear(year + 1, calendar).adding(days: -1)
            } else {
                date = try await calendars.gregorian(year: year, month: f.month, leap: false, day: f.day, calendar)
            }
            if let date { list.append(Festival(key: f.key, name: f.name, date: date.description, kind: "lunar")) }
        }
        let offset = calendar.offsetHours
        for term in Self.solarFestivals[calendar] ?? [] {
            let jd = try await ephemeris.compute { session in
                try session.sunCrossing(term.longitude, after: session.julianDay(year: year, month: 1, day: 1, hour: -offset))
            }
            list.append(Festival(key: term.key, name: term.name, date: CivilDate(julianDayUT: jd, offsetHours: offset).description, kind: "solar"))
        }
        list.sort { $0.date < $1.date }
        return JSONResponse(FestivalsAnswer(calendar: calendar, year: year, festivals: list))
    }

    static let lunarFestivals: [LunisolarCalendar: [(key: String, name: String, month: Int, day: Int)]] = [
        .chinese: [("spring_festival", "Spring Festival (Chinese New Year)", 1, 1), ("lantern", "Lantern Festival", 1, 15),
                   ("dragon_boat", "Dragon Boat Festival", 5, 5), ("qixi", "Qixi Festival", 7, 7), ("ghost", "Ghost Festival", 7, 15),
                   ("mid_autumn", "Mid-Autumn Festival", 8, 15), ("double_ninth", "Double Ninth Festival", 9, 9),
                   ("laba", "Laba Festival", 12, 8), ("new_years_eve", "New Year's Eve", 12, 0)],
        .vietnamese: [("tet", "Tết Nguyên Đán", 1, 1), ("tet_2", "Tết Nguyên Đán (day 2)", 1, 2), ("tet_3", "Tết Nguyên Đán (day 3)", 1, 3),
                      ("nguyen_tieu", "Tết Nguyên Tiêu", 1, 15), ("hung_kings", "Giỗ Tổ Hùng Vương", 3, 10), ("doan_ngo", "Tết Đoan Ngọ", 5, 5),
                      ("vu_lan", "Vu Lan", 7, 15), ("trung_thu", "Tết Trung Thu", 8, 15), ("ong_tao", "Ông Công Ông Táo", 12, 23),
                      ("tat_nien", "Tất Niên (New Year's Eve)", 12, 0)],
    ]

    static let solarFestivals: [LunisolarCalendar: [(key: String, name: String, longitude: Double)]] = [
        .chinese: [("qingming", "Qingming Festival", 15), ("dongzhi", "Winter Solstice Festival (Dongzhi)", 270)],
        .vietnamese: [("thanh_minh", "Tết Thanh Minh", 15), ("dong_chi", "Đông Chí", 270)],
    ]

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
