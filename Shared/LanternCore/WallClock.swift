import Foundation
import Synchronization

/// The source of "now" for all time-dependent code, so tests can move time instead of sleeping.
public struct WallClock: Sendable {
    private let read: @Sendable () -> Date
    /// Whether this clock follows development's time travel (`system` does).
    private let travels: Bool

    public init(_ read: @escaping @Sendable () -> Date) {
        self.init(read, travels: false)
    }

    private init(_ read: @escaping @Sendable () -> Date, travels: Bool) {
        self.read = read
        self.travels = travels
    }

    public func now() -> Date { read() }

    /// The machine's time, moved forward by `DevelopmentTime.offset` (always zero outside development).
    public static let system = WallClock({ Date(timeIntervalSinceNow: DevelopmentTime.offset) }, travels: true)

    /// The machine's time, never travelled.
    public static let machine = WallClock { Date() }

    /// The clock to judge the outside world's times by (a Google ID token's `exp`, an App Store signature's date):
    /// they were made in real time, so a development stack whose clock travelled judges them by the machine's;
    /// any other clock (a test's manual one) judges them by itself.
    public var outsideWorld: WallClock { travels ? .machine : self }

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

/// Development's time travel, as Stripe's test clocks: how far this process's `WallClock.system` runs ahead of the
/// machine's time. A developer moves it forward for the whole local stack (`make time-travel`: the gateway's
/// development-only `POST /development/clock` on its operations port); every process of a development stack reads the
/// shared offset from Redis each second (`ServiceBuilder.addRedis`). Nothing sets it outside development, where it
/// stays zero. Forward only: what was recorded "in the future" never lies ahead of the clock again.
public enum DevelopmentTime {
    private static let milliseconds = Atomic<Int64>(0)

    /// Seconds ahead of the machine's time.
    public static var offset: TimeInterval { Double(milliseconds.load(ordering: .relaxed)) / 1000 }

    /// Sets the offset (the shared value just read or written); a smaller one than the current is ignored.
    public static func advance(toMilliseconds value: Int64) {
        var current = milliseconds.load(ordering: .relaxed)
        while value > current {
            let (exchanged, original) = milliseconds.compareExchange(expected: current, desired: value, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}
