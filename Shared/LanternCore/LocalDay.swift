import Foundation

/// A calendar day where the user is (Gregorian): the day a fortune, a roast, a streak or a collection's schedule is about.
/// Written `YYYY-MM-DD`, as PostgreSQL's `date` prints and the API speaks.
public struct LocalDay: Sendable, Equatable, Hashable, Comparable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The day `instant` falls on in `timeZone`: the zone's offset at that instant (DST included), then day
    /// arithmetic on the Julian Day Number, with no `Calendar` (which costs microseconds to make, on hot paths).
    public init(_ instant: Date, in timeZone: TimeZone) {
        let local = instant.timeIntervalSince1970 + Double(timeZone.secondsFromGMT(for: instant))
        self.init(julianDayNumber: Self.unixEpochJDN + Int((local / 86_400).rounded(.down)))
    }

    /// 1970-01-01.
    static let unixEpochJDN = 2_440_588

    /// A real date written `YYYY-MM-DD` in ASCII digits, else nil ("2027-02-30", "2027-2-3" and "+027-01-01" are not).
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }),
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]), (1...12).contains(m), d >= 1 else { return nil }
        self.init(year: y, month: m, day: d)
        guard d <= daysInMonth else { return nil }
    }

    /// The day of a Julian Day Number (Fliegel and Van Flandern's inverse).
    public init(julianDayNumber jdn: Int) {
        let l = jdn + 68569, n = 4 * l / 146097
        let l2 = l - (146097 * n + 3) / 4, i = 4000 * (l2 + 1) / 1461001
        let l3 = l2 - 1461 * i / 4 + 31, j = 80 * l3 / 2447
        let d = l3 - 2447 * j / 80, l4 = j / 11
        self.init(year: 100 * (n - 49) + i + l4, month: j + 2 - 12 * l4, day: d)
    }

    /// `2026-11-23`.
    public var description: String {
        // By hand: `String(format:)` goes through CoreFoundation's formatter, which showed in request profiles.
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let y = year
        let digits = y >= 1000 ? "\(y)" : y >= 100 ? "0\(y)" : y >= 10 ? "00\(y)" : y >= 0 ? "000\(y)" : String(format: "%04d", y)
        return "\(digits)-\(two(month))-\(two(day))"
    }

    /// Julian Day Number (Fliegel and Van Flandern's integer formula for the Gregorian calendar).
    public var julianDayNumber: Int {
        let a = (14 - month) / 12
        let y = year + 4800 - a
        let m = month + 12 * a - 3
        return day + (153 * m + 2) / 5 + 365 * y + y / 4 - y / 100 + y / 400 - 32045
    }

    public var daysInMonth: Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    public func adding(days: Int) -> LocalDay { LocalDay(julianDayNumber: julianDayNumber + days) }

    public var weekday: String {
        // JDN 0 was a Monday.
        ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"][julianDayNumber % 7]
    }

    /// The instant this day begins in `timeZone` (its local midnight; where a DST change skips midnight, the first
    /// instant of the day, as `Calendar` says).
    public func start(in timeZone: TimeZone) -> Date {
        let midnightUTC = Double(julianDayNumber - Self.unixEpochJDN) * 86_400
        // The zone's offset at the guess, twice: right unless the offset changes within hours of midnight.
        var t = midnightUTC - Double(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: midnightUTC)))
        t = midnightUTC - Double(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: t)))
        let guess = Date(timeIntervalSince1970: t)
        if LocalDay(guess, in: timeZone) == self, LocalDay(guess.addingTimeInterval(-1), in: timeZone) != self { return guess }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar.startOfDay(for: Date(timeIntervalSince1970: midnightUTC + 43_200 - Double(timeZone.secondsFromGMT(for: guess))))
    }

    public static func < (a: LocalDay, b: LocalDay) -> Bool { a.julianDayNumber < b.julianDayNumber }
}

/// Encoded as the API writes it, `YYYY-MM-DD`.
extension LocalDay: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let day = LocalDay(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a date YYYY-MM-DD: '\(text)'")
        }
        self = day
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
