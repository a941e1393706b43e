import Foundation

/// A calendar day in the user's time zone, and what a fortune may say about it: the weekday and the element of the
/// day's pillar in the sexagenary cycle.
struct LocalDay: Sendable, Equatable, Hashable, CustomStringConvertible {
    var year: Int
    var month: Int
    var day: Int

    init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The day `instant` falls on in `timeZone`.
    init(_ instant: Date, in timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: instant)
        self.init(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1)
    }

    /// `2026-11-23`.
    var description: String { String(format: "%04d-%02d-%02d", year, month, day) }

    /// Julian Day Number (Fliegel and Van Flandern's integer formula for the Gregorian calendar).
    var julianDayNumber: Int {
        let a = (14 - month) / 12
        let y = year + 4800 - a
        let m = month + 12 * a - 3
        return day + (153 * m + 2) / 5 + 365 * y + y / 4 - y / 100 + y / 400 - 32045
    }

    /// The day's place in the 60-day cycle, 0 = 甲子 (JDN + 49 ≡ 0 mod 60: 1949-10-01 and 2000-01-07 are 甲子 days).
    var sexagenaryIndex: Int { ((julianDayNumber + 49) % 60 + 60) % 60 }

    /// The element of the day's heavenly stem: 甲乙 Wood, 丙丁 Fire, 戊己 Earth, 庚辛 Metal, 壬癸 Water.
    var element: String { ["Wood", "Fire", "Earth", "Metal", "Water"][(sexagenaryIndex % 10) / 2] }

    var weekday: String {
        // JDN 0 was a Monday.
        ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"][julianDayNumber % 7]
    }

    /// Parses `YYYY-MM-DD` (as PostgreSQL's `date` prints).
    init?(_ text: String) {
        let parts = text.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        self.init(year: parts[0], month: parts[1], day: parts[2])
    }
}
