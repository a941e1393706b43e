import Foundation

/// When the "cookie ready" reminder goes out: when the lock ends, unless that falls in the user's quiet hours
/// (their device's time zone), then at the end of them.
struct QuietHours: Sendable, Equatable {
    /// Minutes after local midnight; `start` after `end` means the window crosses midnight (22:00–08:00).
    var start: Int
    var end: Int

    static let night = QuietHours(start: 22 * 60, end: 8 * 60)

    /// `HH:MM-HH:MM`.
    init?(_ text: String) {
        let parts = text.split(separator: "-").map { $0.split(separator: ":").compactMap { Int($0) } }
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && (0...23).contains($0[0]) && (0...59).contains($0[1]) }) else { return nil }
        self.init(start: parts[0][0] * 60 + parts[0][1], end: parts[1][0] * 60 + parts[1][1])
    }

    init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }

    func contains(minute: Int) -> Bool {
        if start == end { return false }
        return start < end ? (start..<end).contains(minute) : minute >= start || minute < end
    }

    /// `instant`, or the first end of the quiet hours after it when it falls inside them.
    func deliveryTime(for instant: Date, in timeZone: TimeZone) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute], from: instant)
        let minute = (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
        guard contains(minute: minute) else { return instant }
        // The next local time whose clock reads `end` (the same day when before it, else the next day); a DST gap
        // at that hour moves it to the first valid time after.
        return calendar.nextDate(after: instant, matching: DateComponents(hour: end / 60, minute: end % 60, second: 0),
                                 matchingPolicy: .nextTime) ?? instant
    }
}
