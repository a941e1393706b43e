import Foundation
import Synchronization

/// The source of "now" for all time-dependent code, so tests can move time instead of sleeping.
public struct WallClock: Sendable {
    private let read: @Sendable () -> Date

    public init(_ read: @escaping @Sendable () -> Date) { self.read = read }

    public func now() -> Date { read() }

    public static let system = WallClock { Date() }

    /// A clock that only moves when told to.
    public static func manual(_ start: ManualTime) -> WallClock { WallClock { start.now } }
}

/// Mutable time for tests: share one instance between the test and the code under test.
public final class ManualTime: Sendable {
    private let current: Mutex<Date>
    public init(_ start: Date = Date()) { current = Mutex(start) }
    public var now: Date { current.withLock { $0 } }
    public func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
    public func set(_ date: Date) { current.withLock { $0 = date } }
}
