import Foundation
import LanternCore

/// A birth date and clock time at a place, resolved to one UTC instant through the IANA time-zone database
/// (historical offsets, local mean time before standard time, DST).
///
/// A wall-clock time can name no instant (the spring-forward gap) or two (the fall-back overlap): the first is an
/// error the app must show, the second needs a choice (`fold`), else the earlier instant is used and the answer
/// says so.
struct BirthMoment: Sendable, Equatable {
    enum Fold: String, Codable, Sendable { case earlier, later }

    struct Nonexistent: Error, Equatable { var local: String; var zone: String }

    static let earliest = (year: 1900, month: 1, day: 1)
    static let latest = (year: 2100, month: 12, day: 31)

    var year: Int
    var month: Int
    var day: Int
    var hour: Int
    var minute: Int
    /// False when the birth time is unknown: the chart is cast for local noon.
    var timeKnown: Bool
    var timeZone: TimeZone

    /// The resolved instant, the offset from UTC in force then, and whether the local time was ambiguous.
    struct Resolved: Sendable, Equatable {
        var utc: Date
        var offsetSeconds: Int
        /// Set when the local time occurred twice; names which one was used.
        var ambiguity: Fold?
    }

    func resolve(fold: Fold?) throws -> Resolved {
        var utcCalendar = Calendar(identifier: .gregorian)
        utcCalendar.timeZone = TimeZone(identifier: "UTC")!
        guard let wall = utcCalendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute)) else {
            throw Nonexistent(local: local, zone: timeZone.identifier)
        }
        // Every offset in force within a day either side; an instant is valid when its own offset matches.
        let offsets = Set([-86_400, -43_200, 0, 43_200, 86_400].map { timeZone.secondsFromGMT(for: wall.addingTimeInterval(TimeInterval($0))) })
        let instants = offsets.map { wall.addingTimeInterval(TimeInterval(-$0)) }
            .filter { timeZone.secondsFromGMT(for: $0) == Int(wall.timeIntervalSince($0)) }
            .sorted()
        guard let first = instants.first, let last = instants.last else { throw Nonexistent(local: local, zone: timeZone.identifier) }
        if instants.count == 1 { return Resolved(utc: first, offsetSeconds: Int(wall.timeIntervalSince(first)), ambiguity: nil) }
        let chosen = (fold ?? .earlier) == .earlier ? first : last
        return Resolved(utc: chosen, offsetSeconds: Int(wall.timeIntervalSince(chosen)), ambiguity: fold ?? .earlier)
    }


    /// The warning for a local time that occurred twice, naming the one used and how to ask for the other.
    func ambiguityWarning(_ fold: Fold) -> (code: String, message: String) {
        ("ambiguous_local_time",
         "\(local) happened twice in \(timeZone.identifier) (clocks went back); the \(fold.rawValue) of the two was used. Send \"fold\": \"\(fold == .earlier ? "later" : "earlier")\" for the other.")
    }

    var local: String { String(format: "%04d-%02d-%02dT%02d:%02d", year, month, day, hour, minute) }

    /// True for a real calendar date within 1900-01-01 … 2100-12-31.
    static func isSupported(year: Int, month: Int, day: Int) -> Bool {
        guard (earliest.year...latest.year).contains(year), (1...12).contains(month), day >= 1 else { return false }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: DateComponents(year: year, month: month, day: 1)),
              let days = calendar.range(of: .day, in: .month, for: date) else { return false }
        return days.contains(day)
    }
}

extension Date {
    /// The Julian day of this UTC instant on the UT scale: **UTC taken as UT**, as the field's references do
    /// (Astro.com, `swetest -ut` given the UTC time, kerykeion, immanuel). |UT1 − UTC| < 0.9 s by the definition
    /// of UTC since 1972; converting with libswe's ΔT model instead (`swe_utc_to_jd`) moved cusps by up to 19″
    /// against those references, most for future dates where ΔT is extrapolated. Leap seconds are not counted.
    var julianDayUT: Double { timeIntervalSince1970 / 86_400 + 2_440_587.5 }
}
