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
/// carry. One formatter per call: `DateFormatter` is not `Sendable`, and these are rare (a retry, a development stack).
public enum HTTPDate {
    public static func string(from date: Date) -> String { formatter().string(from: date) }

    public static func date(from text: String) -> Date? { formatter().date(from: text) }

    private static func formatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }
}
