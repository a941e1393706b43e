import Crypto
import CryptoExtras
import Foundation
import Hummingbird
import JWTKit
import NIOCore
import Synchronization

/// An identity provider for tests: RSA keys made on the spot, a JWK set served over HTTP on loopback (like
/// Google's `oauth2/v3/certs`), and ID tokens signed with them.
public final class FakeIdentityProvider: Sendable {
    public struct Key: Sendable {
        public let kid: String
        public let privateKey: JWTKit.Insecure.RSA.PrivateKey
        public let publicKey: JWTKit.Insecure.RSA.PublicKey
        public let publicPEM: String
    }

    private let published = Mutex<[Key]>([])
    public let fetchCount = Mutex(0)

    public init() {}

    public static func makeKey(kid: String = "k-" + String(UInt32.random(in: .min ... .max), radix: 16)) throws -> Key {
        let backing = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let privateKey = try JWTKit.Insecure.RSA.PrivateKey(pem: backing.pemRepresentation)
        let publicKey = try JWTKit.Insecure.RSA.PublicKey(pem: backing.publicKey.pemRepresentation)
        return Key(kid: kid, privateKey: privateKey, publicKey: publicKey, publicPEM: backing.publicKey.pemRepresentation)
    }

    /// Replaces the published key set (key rotation).
    public func publish(_ keys: [Key]) { published.withLock { $0 = keys } }

    func jwksJSON() throws -> Data {
        let keys = published.withLock { $0 }
        let jwks = try keys.map { key -> [String: String] in
            let (modulus, exponent) = try key.publicKey.getKeyPrimitives()
            return ["kty": "RSA", "alg": "RS256", "use": "sig", "kid": key.kid,
                    "n": Self.base64URL(modulus), "e": Self.base64URL(exponent)]
        }
        return try JSONSerialization.data(withJSONObject: ["keys": jwks], options: [.sortedKeys])
    }

    /// Serves the key set at `http://127.0.0.1:<port>/certs` while `body` runs.
    public func serve<T: Sendable>(_ body: @Sendable (URL) async throws -> T) async throws -> T {
        let router = Router()
        router.get("/certs") { _, _ in
            self.fetchCount.withLock { $0 += 1 }
            return Response(status: .ok, headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(bytes: try self.jwksJSON())))
        }
        return try await LoopbackServer.run(router: router) { port in
            try await body(URL(string: "http://127.0.0.1:\(port)/certs")!)
        }
    }

    /// Signs an ID token with the given claims (RS256, `kid` in the header).
    public func idToken(key: Key, claims: [String: any Sendable]) async throws -> String {
        let collection = JWTKeyCollection()
        await collection.add(rsa: key.privateKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: key.kid))
        return try await collection.sign(AnyClaims(claims), kid: JWKIdentifier(string: key.kid))
    }

    /// Standard claims for a Google-style token, valid for an hour from `now`.
    public static func googleClaims(sub: String, audience: String, now: Date = Date(), issuer: String = "https://accounts.google.com",
                                    email: String? = "ana@example.com", name: String? = "Ana") -> [String: any Sendable] {
        var claims: [String: any Sendable] = ["iss": issuer, "sub": sub, "aud": audience, "iat": Int(now.timeIntervalSince1970),
                                              "exp": Int(now.timeIntervalSince1970) + 3600]
        if let email { claims["email"] = email }
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

    public static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// A JWT payload of arbitrary claims (tests sign whatever they need, including wrong things).
struct AnyClaims: JWTPayload {
    let claims: [String: any Sendable]
    init(_ claims: [String: any Sendable]) { self.claims = claims }
    init(from decoder: any Decoder) throws { claims = [:] }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (name, value) in claims {
            let key = Key(stringValue: name)
            switch value {
            case let v as String: try container.encode(v, forKey: key)
            case let v as Int: try container.encode(v, forKey: key)
            case let v as Bool: try container.encode(v, forKey: key)
            case let v as [String]: try container.encode(v, forKey: key)
            default: break
            }
        }
    }
    func verify(using algorithm: some JWTAlgorithm) async throws {}

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
