import AsyncHTTPClient
import LanternCore

/// What a service takes from outside besides its configuration, so tests can swap it: the clock, and the HTTP
/// client it reaches other services and third parties with.
public struct ServiceDependencies: Sendable {
    public var clock: WallClock
    public var httpClient: HTTPClient

    public init(clock: WallClock = .system, httpClient: HTTPClient = .shared) {
        self.clock = clock
        self.httpClient = httpClient
    }
}
