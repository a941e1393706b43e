import Crypto
import Foundation
import AsyncHTTPClient
import JWTKit
import LanternContracts
import LanternCore
import Logging
import NIOCore
import Synchronization

/// Signs access and service tokens with an Ed25519 key (EdDSA), and publishes the public half as a JWK set.
public struct AccessTokenIssuer: Sendable {
    public let kid: String
    public let lifetime: TimeInterval
    private let keys: JWTKeyCollection
    private let publicKey: Curve25519.Signing.PublicKey
    private let clock: WallClock

    /// - Parameter privateKey: the raw 32-byte Ed25519 seed.
    public init(privateKey: Data, lifetime: TimeInterval = 900, clock: WallClock) async throws {
        let key = try Curve25519.Signing.PrivateKey(rawRepresentation: privateKey)
        self.publicKey = key.publicKey
        // The kid is derived from the public key: stable across restarts and instances, new on rotation.
        self.kid = Base64URL.encode(Array(SHA256.hash(data: key.publicKey.rawRepresentation)).prefix(8))
        self.lifetime = lifetime
        self.clock = clock
        self.keys = JWTKeyCollection()
        await keys.add(eddsa: EdDSA.PrivateKey(backing: key), kid: JWKIdentifier(string: kid))
    }

    public func issue(userID: UUID, sessionID: UUID, app: AppID) async throws -> (token: String, expiresAt: Date) {
        let now = clock.now()
        let expires = now.addingTimeInterval(lifetime)
        let claims = AccessClaims(sub: userID.lowercased, sid: sessionID.lowercased, app: app.rawValue, iss: TokenAudience.issuer,
                                  aud: TokenAudience.app, issuedAt: now, expiresAt: expires)
        return (try await keys.sign(claims, kid: JWKIdentifier(string: kid)), expires)
    }

    /// A short-lived token a service presents to another service's `/internal/…` routes.
    public func issueServiceToken(service: String) async throws -> String {
        let now = clock.now()
        let claims = AccessClaims(sub: "service:\(service)", sid: nil, app: nil, iss: TokenAudience.issuer,
                                  aud: TokenAudience.service, issuedAt: now, expiresAt: now.addingTimeInterval(lifetime))
        return try await keys.sign(claims, kid: JWKIdentifier(string: kid))
    }

    /// The `/.well-known/jwks.json` document.
    public var jwks: PublicJWKS {
        PublicJWKS(keys: [.init(kty: "OKP", crv: "Ed25519", x: Base64URL.encode(publicKey.rawRepresentation), kid: kid, alg: "EdDSA", use: "sig")])
    }

    /// A verifier that trusts this issuer's key directly (identity verifies its own tokens without HTTP).
    public func localVerifier(leeway: TimeInterval = AccessTokenVerifier.defaultLeeway) async -> AccessTokenVerifier {
        let collection = JWTKeyCollection()
        await collection.add(eddsa: EdDSA.PublicKey(backing: publicKey), kid: JWKIdentifier(string: kid))
        let kid = self.kid
        return AccessTokenVerifier(clock: clock, leeway: leeway) { requested in
            guard requested == nil || requested == kid else { throw TokenError("unknown_key", "The token is signed with an unknown key.") }
            return collection
        }
    }
}

public struct PublicJWKS: Codable, Sendable {
    public struct Key: Codable, Sendable {
        public var kty: String
        public var crv: String
        public var x: String
        public var kid: String
        public var alg: String
        public var use: String
    }
    public var keys: [Key]
}

/// Verifies Lantern access tokens: EdDSA only, known `kid`, issuer, audience, and time with a small leeway.
///
/// A signature check costs ~60 µs of CPU, more than the rest of a typical request, and apps send the same token
/// for its whole lifetime: tokens whose signature and audience checked out are remembered (bounded), while time
/// is checked on every call.
///
/// A token outlives its account by up to its lifetime: with `refusingErased(_:)` the tokens of an account deleted
/// since they were issued are refused (`AccountErased`, 401 `account_deleted`), checked on every call since a
/// deletion must take effect at once on every replica.
public struct AccessTokenVerifier: Sendable {
    public let clock: WallClock
    let leeway: TimeInterval
    let keys: @Sendable (String?) async throws -> JWTKeyCollection
    let cache = VerifiedTokens(capacity: 10_000)
    /// How far past its expiry a token is still taken (clocks differ a little).
    public static let defaultLeeway: TimeInterval = 30
    private(set) var erased: (any ErasedAccountCheck)?

    public init(clock: WallClock, leeway: TimeInterval = AccessTokenVerifier.defaultLeeway, keys: @escaping @Sendable (String?) async throws -> JWTKeyCollection) {
        self.clock = clock
        self.leeway = leeway
        self.keys = keys
    }

    /// Trusts the key set published by identity (`IDENTITY_URL/.well-known/jwks.json`).
    public init(keySet: RemoteKeySet, clock: WallClock, leeway: TimeInterval = AccessTokenVerifier.defaultLeeway) {
        self.init(clock: clock, leeway: leeway) { kid in try await keySet.keys(for: kid) }
    }

    /// What every service but identity verifies with: identity's published key set at `identityURL`, cached
    /// for 10 minutes and fetched again at once (at most every second) when a token names an unknown key.
    /// A service builds it with `ServiceBuilder.addAccessTokens`, which also loads the set as the process starts.
    public init(identity identityURL: URL, clock: WallClock, logger: Logger) {
        self.init(keySet: RemoteKeySet(identity: identityURL, logger: logger), clock: clock)
    }

    /// This verifier, refusing the tokens of the accounts `check` reports erased.
    public func refusingErased(_ check: any ErasedAccountCheck) -> AccessTokenVerifier {
        var copy = self
        copy.erased = check
        return copy
    }

    /// Returns the claims of a valid token for `audience`, or throws `TokenError` (`AccountErased` for a user's token
    /// whose account was deleted).
    public func verify(_ token: String, audience: String = TokenAudience.app) async throws -> AccessClaims {
        let claims = try await verifySignedClaims(token, audience: audience)
        if let erased, !claims.isService, try await erased.isErased(claims.sub) { throw AccountErased() }
        return claims
    }

    /// The same, completing on `eventLoop`, for a caller that lives on an event loop (the gateway's proxy handler):
    /// a token seen before costs no task; a new one is verified in a task once (its key set may need fetching).
    public func verify(_ token: String, audience: String = TokenAudience.app, on eventLoop: any EventLoop) -> EventLoopFuture<AccessClaims> {
        let signed: EventLoopFuture<AccessClaims>
        if let claims = cache.claims(for: token), claims.aud == audience {
            do {
                signed = eventLoop.makeSucceededFuture(try checkTime(claims))
            } catch {
                return eventLoop.makeFailedFuture(error)
            }
        } else {
            signed = eventLoop.makeFutureWithTask { try await verifySignedClaims(token, audience: audience) }
        }
        guard let erased else { return signed }
        return signed.flatMap { claims in
            guard !claims.isService else { return eventLoop.makeSucceededFuture(claims) }
            return erased.isErased(claims.sub, on: eventLoop).flatMapThrowing { isErased in
                if isErased { throw AccountErased() }
                return claims
            }
        }
    }

    private func verifySignedClaims(_ token: String, audience: String) async throws -> AccessClaims {
        if let claims = cache.claims(for: token), claims.aud == audience {
            return try checkTime(claims)
        }
        let header = try JWTHeaderFields.parse(token)
        // Pin the algorithm before looking at keys: no `none`, no HMAC-with-a-public-key confusion.
        guard header.alg == "EdDSA" else { throw TokenError("invalid_token", "The token's algorithm is not accepted.") }
        let collection = try await keys(header.kid)
        let claims: AccessClaims
        do {
            claims = try await collection.verify(token, as: AccessClaims.self)
        } catch {
            throw TokenError("invalid_token", "The token's signature is not valid.")
        }
        guard claims.iss == TokenAudience.issuer, claims.aud == audience else {
            throw TokenError("invalid_token", "The token is not meant for this service.")
        }
        _ = try checkTime(claims)
        cache.insert(claims, for: token)
        return claims
    }

    private func checkTime(_ claims: AccessClaims) throws -> AccessClaims {
        let now = clock.now().timeIntervalSince1970
        guard Double(claims.exp) + leeway >= now else { throw TokenError("token_expired", "The access token has expired; refresh it.") }
        guard Double(claims.iat) - leeway <= now else { throw TokenError("invalid_token", "The token was issued in the future.") }
        return claims
    }
}

/// Whether a user's account was erased after its tokens were issued (`ErasedAccounts` asks Redis, where identity
/// marks each deletion before it answers).
public protocol ErasedAccountCheck: Sendable {
    /// - Parameter user: the token's `sub`, a lower-case user id.
    func isErased(_ user: String) async throws -> Bool

    /// The same, completing on `eventLoop` (the gateway's proxy handler asks from its event loop).
    func isErased(_ user: String, on eventLoop: any EventLoop) -> EventLoopFuture<Bool>
}

extension ErasedAccountCheck {
    public func isErased(_ user: String, on eventLoop: any EventLoop) -> EventLoopFuture<Bool> {
        eventLoop.makeFutureWithTask { try await isErased(user) }
    }
}

extension AccessTokenVerifier {
    /// The key collection this verifier would use for `kid` (lets one verifier delegate to another).
    public func keyCollection(for kid: String?) async throws -> JWTKeyCollection { try await keys(kid) }
}

/// Tokens whose signature has been verified, by token text. Bounded: when full it starts over, which costs a few
/// re-verifications and keeps the memory flat.
final class VerifiedTokens: Sendable {
    private let capacity: Int
    private let entries = Mutex<[String: AccessClaims]>([:])

    init(capacity: Int) { self.capacity = capacity }

    func claims(for token: String) -> AccessClaims? { entries.withLock { $0[token] } }

    func insert(_ claims: AccessClaims, for token: String) {
        entries.withLock {
            if $0.count >= capacity { $0.removeAll(keepingCapacity: true) }
            $0[token] = claims
        }
    }
}
