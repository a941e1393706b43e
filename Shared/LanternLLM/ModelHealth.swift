import Foundation
import LanternCore
import Synchronization

/// Which models are sick: after `failures` failures in a row a model is skipped for `coolDown`, and one call
/// then probes it (success clears it, failure skips it again). A 429 whose wait is longer than a caller can spend
/// skips the model until that wait is over. Time comes from the injected clock.
final class ModelHealth: Sendable {
    struct Entry {
        var consecutiveFailures = 0
        var skipUntil: Date?
    }
    private let entries = Mutex<[String: Entry]>([:])
    let failures: Int
    let coolDown: TimeInterval
    let clock: WallClock

    init(failures: Int, coolDown: TimeInterval, clock: WallClock) {
        self.failures = failures
        self.coolDown = coolDown
        self.clock = clock
    }

    /// When the model may be called again, if it is being skipped now.
    func skippedUntil(_ key: String) -> Date? {
        let now = clock.now()
        return entries.withLock { entries in
            guard let until = entries[key]?.skipUntil, until > now else { return nil }
            return until
        }
    }

    func succeeded(_ key: String) {
        entries.withLock { $0[key] = nil }
    }

    /// Records a failure that says the model is sick; a provider's own wait (`retryAfter`) skips it until then.
    func failed(_ key: String, retryAfter: Duration? = nil) {
        let now = clock.now()
        entries.withLock { entries in
            var entry = entries[key] ?? Entry()
            entry.consecutiveFailures += 1
            var until = entry.skipUntil.flatMap { $0 > now ? $0 : nil }
            if entry.consecutiveFailures >= failures { until = max(until ?? now, now.addingTimeInterval(coolDown)) }
            if let retryAfter { until = max(until ?? now, now.addingTimeInterval(retryAfter.inSeconds)) }
            entry.skipUntil = until
            entries[key] = entry
        }
    }
}
