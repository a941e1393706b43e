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
    private var cachedVerifier: AccessTokenVerifier?

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

    /// A verifier for our own tokens, built once (identity checks tokens without an HTTP round trip to itself).
    func verifier() async throws -> AccessTokenVerifier {
        if let cachedVerifier { return cachedVerifier }
        let verifier = try await issuer().localVerifier()
        cachedVerifier = verifier
        return verifier
    }
}
