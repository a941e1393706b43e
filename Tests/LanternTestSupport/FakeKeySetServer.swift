import Crypto
import DevIdentity
import Foundation
import Hummingbird
import JWTKit
import NIOCore
import Synchronization

/// An identity provider for tests: RSA keys made on the spot, a JWK set served over HTTP on loopback (like
/// Google's `oauth2/v3/certs`), and ID tokens signed with them.
public final class FakeIdentityProvider: Sendable {
    public typealias Key = IDTokenKey

    private let published = Mutex<[Key]>([])
    public let fetchCount = Mutex(0)
    /// How many of the next fetches answer 503 (an issuer restarting, a machine too busy to answer in time).
    public let failures = Mutex(0)

    public init() {}

    public static func makeKey(kid: String = "k-" + String(UInt32.random(in: .min ... .max), radix: 16)) throws -> Key {
        try IDTokenKey.generate(kid: kid)
    }

    /// Replaces the published key set (key rotation).
    public func publish(_ keys: [Key]) { published.withLock { $0 = keys } }

    func jwksJSON() throws -> Data { try IDTokenKey.jwks(published.withLock { $0 }) }

    /// Serves the key set at `http://127.0.0.1:<port>/certs` while `body` runs.
    public func serve<T: Sendable>(_ body: @Sendable (URL) async throws -> T) async throws -> T {
        let router = Router()
        router.get("/certs") { _, _ in
            self.fetchCount.withLock { $0 += 1 }
            let fails = self.failures.withLock { count in
                defer { count = max(0, count - 1) }
                return count > 0
            }
            if fails { return Response(status: .serviceUnavailable) }
            return Response(status: .ok, headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(bytes: try self.jwksJSON())))
        }
        return try await LoopbackServer.run(router: router) { port in
            try await body(URL(string: "http://127.0.0.1:\(port)/certs")!)
        }
    }

    /// Signs an ID token with the given claims (RS256, `kid` in the header).
    public func idToken(key: Key, claims: [String: any Sendable]) async throws -> String {
        try await key.sign(claims)
    }

    /// Standard claims for a Google-style token, valid for an hour from `now`; `emailVerified` is sent as given
    /// (Google sends a boolean, Apple a boolean or the string "true"; nil: no such claim).
    public static func googleClaims(sub: String, audience: String, now: Date = Date(), issuer: String = "https://accounts.google.com",
                                    email: String? = "ana@example.com", emailVerified: (any Sendable)? = true,
                                    name: String? = "Ana") -> [String: any Sendable] {
        var claims: [String: any Sendable] = ["iss": issuer, "sub": sub, "aud": audience, "iat": Int(now.timeIntervalSince1970),
                                              "exp": Int(now.timeIntervalSince1970) + 3600]
        if let email { claims["email"] = email }
        if email != nil, let emailVerified { claims["email_verified"] = emailVerified }
        if let name { claims["name"] = name }
        return claims
    }

    /// A token with `alg: none` and no signature.
    public static func unsignedToken(claims: [String: any Sendable]) throws -> String {
        let header = try JSONSerialization.data(withJSONObject: ["alg": "none", "typ": "JWT"])
        let payload = try JSONSerialization.data(withJSONObject: claims)
        return base64URL(header) + "." + base64URL(payload) + "."
    }

    /// The classic algorithm-confusion attack: HS256 with the provider's *public* key as the HMAC secret.
    public static func hmacWithPublicKey(_ key: Key, claims: [String: any Sendable]) throws -> String {
        let header = try JSONSerialization.data(withJSONObject: ["alg": "HS256", "typ": "JWT", "kid": key.kid])
        let payload = try JSONSerialization.data(withJSONObject: claims)
        let input = base64URL(header) + "." + base64URL(payload)
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(key.publicPEM.utf8)))
        return input + "." + base64URL(Data(mac))
    }

    public static func base64URL(_ data: Data) -> String { Base64URL.encode(data) }
}
