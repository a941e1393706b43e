import Foundation

/// The wait a server asks for before the next try: `Retry-After` (RFC 9110 §10.2.3) as delta-seconds or as an
/// HTTP date, and OpenAI's `retry-after-ms`, which wins when both are there. One parser for every client of a third
/// party or of another service; nil when there is no usable value.
public enum RetryAfter {
    public static func parse(_ value: String?, milliseconds: String? = nil, now: Date = Date()) -> Duration? {
        if let text = milliseconds?.trimmingCharacters(in: .whitespaces), let ms = Double(text), ms.isFinite, ms >= 0 {
            return .milliseconds(Int64(min(ms, 86_400_000)))
        }
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        // delta-seconds is a whole number; some servers send a fraction, which is taken as meant.
        if let seconds = Double(value), seconds.isFinite {
            return seconds >= 0 ? .milliseconds(Int64(min(seconds, 86_400) * 1000)) : nil
        }
        guard let date = HTTPDate.date(from: value) else { return nil }
        return .milliseconds(max(0, Int64(date.timeIntervalSince(now) * 1000)))
    }
}

/// HTTP's date format, IMF-fixdate (RFC 9110 §5.6.7: `Sun, 06 Nov 1994 08:49:37 GMT`): what `Retry-After` and `Date`
/// carry. Written from the numbers (every answer of the gateway's proxy carries one); read with one formatter per
/// call: `DateFormatter` is not `Sendable`, and reading is rare (a retry).
public enum HTTPDate {
    public static func string(from date: Date) -> String {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        // Gregorian years only (1583 to 9999): before 1583 the formatter's calendar is Julian.
        guard seconds >= -12_212_553_600, seconds < 253_402_300_800 else { return formatter().string(from: date) }
        return string(secondsSince1970: Int(seconds))
    }

    static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// IMF-fixdate of a whole second (proleptic Gregorian, years 1 to 9999).
    public static func string(secondsSince1970 seconds: Int) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let second = seconds - days * 86_400
        let (year, month, day) = RFC3339.civil(fromDays: days)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        let weekday = weekdays[((days % 7) + 7) % 7]
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(weekday), \(two(day)) \(months[month - 1]) \(yearText) \(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60)) GMT"
    }

    public static func date(from text: String) -> Date? { formatter().date(from: text) }

    private static func formatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }
}
