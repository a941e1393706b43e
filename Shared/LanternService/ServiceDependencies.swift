import AsyncHTTPClient
import LanternCore

/// What a service takes from outside besides its configuration, so tests can swap it: the clock, the HTTP client it
/// reaches other services and third parties with, and what one service alone swaps (where media keeps photo bytes,
/// push-worker's providers), each declared next to its service as a `ServiceDependencyKey`. One struct for every
/// service's `build…Application(_:dependencies:logger:)`.
public struct ServiceDependencies: Sendable {
    public var clock: WallClock
    public var httpClient: HTTPClient
    private var extras: [ObjectIdentifier: any Sendable] = [:]

    public init(clock: WallClock = .system, httpClient: HTTPClient = .shared) {
        self.clock = clock
        self.httpClient = httpClient
    }

    /// A service's own dependency; nil unless a test set it (the service then builds it from its configuration).
    public subscript<Key: ServiceDependencyKey>(_ key: Key.Type) -> Key.Value? {
        get { extras[ObjectIdentifier(key)] as? Key.Value }
        set { extras[ObjectIdentifier(key)] = newValue }
    }
}

/// A dependency of one service that tests may replace (`ServiceDependencies[Key.self]`); the service gives it a
/// property of its own on `ServiceDependencies`.
public protocol ServiceDependencyKey {
    associatedtype Value: Sendable
}
