import Crypto
import Foundation
import NIOCore
import PostgresNIO
import LanternCore
import LanternTokens

/// Holds the access-token issuer, loading the key from configuration or the database on first use.
actor SigningKeys {
    private let configured: Data?
    let db: IdentityDatabase
    private let lifetime: TimeInterval
    private let clock: WallClock
    private var cached: AccessTokenIssuer?
    private var cachedVerifier: AccessTokenVerifier?

    init(configured: Data?, db: IdentityDatabase, lifetime: TimeInterval, clock: WallClock) {
        self.configured = configured
        self.db = db
        self.lifetime = lifetime
        self.clock = clock
    }

    func issuer() async throws -> AccessTokenIssuer {
        if let cached { return cached }
        let seed: Data
        if let configured { seed = configured } else { seed = try await loadOrCreateSigningSeed() }
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


    /// The persisted signing seed, created once (under a lock, so concurrent first starts agree on one key).
    func loadOrCreateSigningSeed() async throws -> Data {
        try await db.client.transaction(logger: db.logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext('lantern.identity.signing_key'))", logger: db.logger)
            let rows = try await connection.query("SELECT seed FROM identity.signing_keys ORDER BY created_at DESC LIMIT 1", logger: db.logger)
            for try await seed in rows.decode(ByteBuffer.self) { return Data(buffer: seed) }
            let seed = Curve25519.Signing.PrivateKey().rawRepresentation
            try await connection.query("""
                INSERT INTO identity.signing_keys (kid, seed, created_at) VALUES (\(UUID().lowercased), \(ByteBuffer(bytes: seed)), \(db.clock.now()))
                """, logger: db.logger)
            db.logger.notice("generated an access-token signing key (set IDENTITY_SIGNING_KEY to manage it yourself)")
            return seed
        }
    }
}
