import Foundation
import LanternCore
import LanternTokens

/// Holds the access-token issuer, loading the key from configuration or the database on first use.
actor SigningKeys {
    private let configured: Data?
    private let store: IdentityStore
    private let lifetime: TimeInterval
    private let clock: WallClock
    private var cached: AccessTokenIssuer?

    init(configured: Data?, store: IdentityStore, lifetime: TimeInterval, clock: WallClock) {
        self.configured = configured
        self.store = store
        self.lifetime = lifetime
        self.clock = clock
    }

    func issuer() async throws -> AccessTokenIssuer {
        if let cached { return cached }
        let seed: Data
        if let configured { seed = configured } else { seed = try await store.loadOrCreateSigningSeed() }
        let issuer = try await AccessTokenIssuer(privateKey: seed, lifetime: lifetime, clock: clock)
        cached = issuer
        return issuer
    }
}
