import Ephemeris
import Foundation
import LanternContracts
import Synchronization

/// A civil date without time or zone.
public struct CivilDate: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    /// Julian Day Number of the date (noon-based, an integer), the count the sexagenary day cycle runs on.
    public var julianDayNumber: Int {
        let a = (14 - month) / 12, y = year + 4800 - a, m = month + 12 * a - 3
        return day + (153 * m + 2) / 5 + 365 * y + y / 4 - y / 100 + y / 400 - 32045
    }

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    public init(julianDayNumber jdn: Int) {
        let a = jdn + 32044, b = (4 * a + 3) / 146_097, c = a - 146_097 * b / 4
        let d = (4 * c + 3) / 1461, e = c - 1461 * d / 4, m = (5 * e + 2) / 153
        self.init(year: 100 * b + d - 4800 + m / 10, month: m + 3 - 12 * (m / 10), day: e - (153 * m + 2) / 5 + 1)
    }

    /// The civil date at `offsetHours` east of Greenwich of a Julian day (UT).
    public init(julianDayUT: Double, offsetHours: Double) {
        self.init(julianDayNumber: Int((julianDayUT + offsetHours / 24 + 0.5).rounded(.down)))
    }

    /// A real calendar date `YYYY-MM-DD` within 1900-01-01 … 2100-12-31 (the range every route accepts), else nil.
    public init?(parsing text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(Self.digits)
        guard text.count == 10, parts.count == 3, let y = parts[0], let m = parts[1], let d = parts[2],
              BirthMoment.isSupported(year: y, month: m, day: d) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// The number a run of ASCII digits spells, nil for anything else: `Int("+5")` is 5, and "1990-+5-17" is not a
    /// date.
    public static func digits(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return Int(text)
    }

    public func adding(days: Int) -> CivilDate { CivilDate(julianDayNumber: julianDayNumber + days) }

    public static func < (a: CivilDate, b: CivilDate) -> Bool { a.julianDayNumber < b.julianDayNumber }

    public var description: String { String(format: "%04d-%02d-%02d", year, month, day) }
}

/// The Chinese (UTC+8; Beijing's meridian 1912–1928) and Vietnamese (UTC+7) lunisolar calendars, computed from
/// the Sun and Moon rather than
/// tables: a month starts on the local day of a new moon; the month holding the winter solstice is the 11th;
/// when 13 months run from one 11th month to the next, the first that holds no major solar term (a multiple of
/// 30° of solar longitude) is the leap month and repeats the previous number.
public enum LunisolarCalendar: String, CaseIterable, Codable, Sendable {
    case chinese, vietnamese

    /// The meridian the calendar is reckoned at, hours east of Greenwich, for the months of a (solstice) year. The
    /// Chinese calendar: from 1912 to 1928 the Republic's Central Observatory reckoned it at Beijing's own meridian
    /// (116°25′ E, UTC+7:45:40) — Spring Festival 1916 is 1916-02-03, not 02-04, and the months of 1914-11 and
    /// 1920-11 start a day earlier than at UTC+8; from 1929 at UTC+8 (120° E). The late Qing calendar (1900–1911)
    /// agrees month for month with a reckoning at UTC+8 (1906-04 would start a day early at Beijing's meridian).
    /// Checked against every month start 1900–2100 of the published calendar (lunar-python). The Vietnamese
    /// calendar: UTC+7.
    public func offsetHours(year: Int) -> Double {
        switch self {
        case .chinese: (1912...1928).contains(year) ? Self.beijingMeanTime : 8
        case .vietnamese: 7
        }
    }

    /// Beijing's local mean time: 7 h 45 min 40 s.
    public static let beijingMeanTime = 7 + 45.0 / 60 + 40.0 / 3600

    public struct Month: Codable, Sendable, Equatable {
        public var start: CivilDate
        public var number: Int
        public var leap: Bool
        public var length: Int
        /// The lunar year it belongs to (the Gregorian year in which that lunar year's first month begins).
        public var year: Int
    }

    /// A date in the calendar: the contract's (`BaziAnswer.LunarDate`), which astrology's answers carry.
    public typealias LunarDate = BaziAnswer.LunarDate
}

/// Computes and caches the months of each "solstice year" (11th month to 11th month).
public final class LunisolarCalendars: Sendable {
    let ephemeris: SwissEphemeris
    private let cache = Mutex<[String: [LunisolarCalendar.Month]]>([:])
    private let terms = Mutex<[Int: [(longitude: Double, julianDayUT: Double)]]>([:])

    public init(ephemeris: SwissEphemeris) { self.ephemeris = ephemeris }

    /// The months from the 11th month containing the winter solstice of `year - 1` up to (not including) the one
    /// containing the solstice of `year`.
    public func solsticeYear(_ year: Int, _ calendar: LunisolarCalendar) async throws -> [LunisolarCalendar.Month] {
        let key = "\(calendar.rawValue)-\(year)"
        if let cached = cache.withLock({ $0[key] }) { return cached }
        let offset = calendar.offsetHours(year: year)
        let months = try await ephemeris.compute { session -> [LunisolarCalendar.Month] in
            func monthStart(containing jd: Double) throws -> CivilDate {
                let day = CivilDate(julianDayUT: jd, offsetHours: offset)
                var start = CivilDate(julianDayUT: try session.newMoon(after: jd - 32), offsetHours: offset)
                while true {
                    let next = CivilDate(julianDayUT: try session.newMoon(after: try session.julianDay(year: start.year, month: start.month, day: start.day, hour: 12 - offset) + 1), offsetHours: offset)
                    if next > day { return start }
                    start = next
                }
            }
            let solsticeBefore = try session.sunCrossing(270, after: session.julianDay(year: year - 1, month: 11, day: 1, hour: 0))
            let solsticeAfter = try session.sunCrossing(270, after: session.julianDay(year: year, month: 11, day: 1, hour: 0))
            let first = try monthStart(containing: solsticeBefore), last = try monthStart(containing: solsticeAfter)
            var starts = [first]
            while let current = starts.last, current < last {
                let jd = session.julianDay(year: current.year, month: current.month, day: current.day, hour: 12 - offset) + 1
                starts.append(CivilDate(julianDayUT: try session.newMoon(after: jd), offsetHours: offset))
            }
            // `starts` ends with `last`: months are starts[i] ..< starts[i+1].
            /// The Sun's longitude band (0–11, 30° each) at the start (local midnight) of a date.
            func band(_ date: CivilDate) throws -> Int {
                Int(try session.sunLongitude(julianDayUT: session.julianDay(year: date.year, month: date.month, day: date.day, hour: -offset)) / 30)
            }
            let count = starts.count - 1
            var leapIndex: Int?
            if count == 13 {
                for i in 1..<count {
                    if try band(starts[i]) == band(starts[i + 1]) {
                        leapIndex = i
                        break
                    }
                }
            }
            var months: [LunisolarCalendar.Month] = []
            var number = 11
            var seenFirst = false
            for i in 0..<count {
                let isLeap = i == leapIndex
                if i > 0 && !isLeap { number = number % 12 + 1 }
                if number == 1 && !isLeap { seenFirst = true }
                months.append(.init(start: starts[i], number: number, leap: isLeap,
                                    length: starts[i + 1].julianDayNumber - starts[i].julianDayNumber, year: seenFirst ? year : year - 1))
            }
            return months
        }
        cache.withLock { $0[key] = months }
        return months
    }

    public func lunarDate(of date: CivilDate, _ calendar: LunisolarCalendar) async throws -> LunisolarCalendar.LunarDate {
        for year in [date.year, date.year + 1] {
            let months = try await solsticeYear(year, calendar)
            if let month = months.last(where: { $0.start <= date }), date.julianDayNumber - month.start.julianDayNumber < month.length {
                return .init(year: month.year, month: month.number, leap: month.leap, day: date.julianDayNumber - month.start.julianDayNumber + 1,
                             monthLength: month.length)
            }
        }
        throw EphemerisError(description: "no lunar month found for \(date)")
    }

    /// The Gregorian date of a lunar date, or nil when that month (or leap month, or 30th day) does not exist.
    public func gregorian(year: Int, month: Int, leap: Bool, day: Int, _ calendar: LunisolarCalendar) async throws -> CivilDate? {
        for candidate in [year, year + 1] {
            let months = try await solsticeYear(candidate, calendar)
            if let found = months.first(where: { $0.year == year && $0.number == month && $0.leap == leap }) {
                return (1...found.length).contains(day) ? found.start.adding(days: day - 1) : nil
            }
        }
        return nil
    }

    /// The 24 solar terms of a Gregorian year (Julian days UT), from Xiao Han (285°, early January) to Dong Zhi
    /// (270°, December), computed once per year.
    public func solarTerms(_ year: Int) async throws -> [(longitude: Double, julianDayUT: Double)] {
        if let cached = terms.withLock({ $0[year] }) { return cached }
        let computed = try await ephemeris.compute { session -> [(longitude: Double, julianDayUT: Double)] in
            var jd = session.julianDay(year: year, month: 1, day: 1, hour: 0)
            return try (0..<24).map { k in
                let longitude = Double((285 + 15 * k) % 360)
                jd = try session.sunCrossing(longitude, after: jd)
                return (longitude, jd)
            }
        }
        terms.withLock { $0[year] = computed }
        return computed
    }

    /// The start of the 15° band of solar longitude the Sun is in at `julianDayUT` (what the year and month
    /// pillars need), from the cached terms: no ephemeris call once the year is known.
    public func solarLongitudeBand(at julianDayUT: Double, year: Int) async throws -> Double {
        let current = try await solarTerms(year)
        if let last = current.last(where: { $0.julianDayUT <= julianDayUT }) { return last.longitude }
        // Before this year's Xiao Han: still in last year's Dong Zhi band, unless the year turned very late.
        return try await solarTerms(year - 1).last(where: { $0.julianDayUT <= julianDayUT })?.longitude ?? 270
    }

    /// The day of the lunar new year (first day of month 1) of `year`.
    public func newYear(_ year: Int, _ calendar: LunisolarCalendar) async throws -> CivilDate {
        guard let date = try await gregorian(year: year, month: 1, leap: false, day: 1, calendar) else {
            throw EphemerisError(description: "no new year in \(year)")
        }
        return date
    }
}
