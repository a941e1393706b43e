import Foundation
import LanternCore
import Synchronization

/// The exact cache: an identical request (same task, instructions, descriptors, limits) gets the same text
/// without a call. Bounded by entries (least recently used out first) and by age.
final class ResponseCache: Sendable {
    private struct Entry {
        var text: String
        var source: TextSource
        var storedAt: Date
        var lastUsed: UInt64
    }
    private struct State {
        var entries: [String: Entry] = [:]
        var tick: UInt64 = 0
    }
    private let state = Mutex(State())
    let capacity: Int
    let maxAge: TimeInterval
    let clock: WallClock

    init(capacity: Int, maxAge: TimeInterval, clock: WallClock) {
        self.capacity = capacity
        self.maxAge = maxAge
        self.clock = clock
    }

    func text(for key: String) -> (String, TextSource)? {
        let now = clock.now()
        return state.withLock { state in
            guard let entry = state.entries[key] else { return nil }
            guard now.timeIntervalSince(entry.storedAt) < maxAge else {
                state.entries[key] = nil
                return nil
            }
            state.tick += 1
            state.entries[key]?.lastUsed = state.tick
            return (entry.text, entry.source)
        }
    }

    func store(_ text: String, source: TextSource, for key: String) {
        guard capacity > 0 else { return }
        let now = clock.now()
        state.withLock { state in
            state.tick += 1
            if state.entries[key] == nil, state.entries.count >= capacity,
               let oldest = state.entries.min(by: { $0.value.lastUsed < $1.value.lastUsed })?.key {
                state.entries[oldest] = nil
            }
            state.entries[key] = Entry(text: text, source: source, storedAt: now, lastUsed: state.tick)
        }
    }
}
