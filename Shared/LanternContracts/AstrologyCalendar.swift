import Foundation

/// The festivals of a Gregorian year in the Chinese or Vietnamese lunisolar calendar, as astrology computes them
/// (`GET /internal/astrology/calendar/festivals?calendar=vietnamese&year=2027`, also `/v1/astrology/…` for apps):
/// the lunar ones (Tết, Mid-Autumn, …) and the solar terms that are festivals, by date.
public struct FestivalCalendar: Codable, Sendable, Equatable {
    public struct Festival: Codable, Sendable, Equatable {
        /// Stable across years and languages: `tet`, `trung_thu`, `spring_festival`, `mid_autumn`, …
        public var key: String
        public var name: String
        /// `YYYY-MM-DD`, the local civil date in the calendar's own meridian.
        public var date: String
        /// `lunar` (a lunar date) or `solar` (a solar term).
        public var kind: String

        public init(key: String, name: String, date: String, kind: String) {
            self.key = key
            self.name = name
            self.date = date
            self.kind = kind
        }
    }

    /// `chinese` or `vietnamese`.
    public var calendar: String
    public var year: Int
    /// In date order.
    public var festivals: [Festival]

    public init(calendar: String, year: Int, festivals: [Festival]) {
        self.calendar = calendar
        self.year = year
        self.festivals = festivals
    }
}

extension AstrologyEndpoint {
    /// `GET` with `calendar` (`chinese`, `vietnamese`) and `year` (1900–2100): the year's festivals.
    public static let festivals = InternalRoute<NoBody, FestivalCalendar>(service: "astrology", method: "GET",
                                                                          path: "/internal/astrology/calendar/festivals", callers: ["content"])
}
