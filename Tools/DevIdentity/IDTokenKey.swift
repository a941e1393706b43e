import Crypto
import CryptoExtras
import Foundation
import JWTKit

/// An RSA key that signs ID tokens as Google and Apple sign theirs (RS256, `kid` in the header) and publishes
/// itself as a JWK set like `https://www.googleapis.com/oauth2/v3/certs`. The development identity provider and the
/// tests' fake providers both mint with it, so identity verifies development tokens exactly as real ones.
public struct IDTokenKey: Sendable {
    public let kid: String
    public let privateKey: JWTKit.Insecure.RSA.PrivateKey
    public let publicKey: JWTKit.Insecure.RSA.PublicKey
    public let privatePEM: String
    public let publicPEM: String

    /// A new 2048-bit key.
    public static func generate(kid: String = "k-" + String(UInt32.random(in: .min ... .max), radix: 16)) throws -> IDTokenKey {
        try IDTokenKey(pem: try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation, kid: kid)
    }

    /// A key from its PKCS#8 or PKCS#1 PEM (the development provider keeps its key in a file, so the tokens it has
    /// minted stay valid across restarts).
    public init(pem: String, kid: String) throws {
        let backing = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        self.kid = kid
        privatePEM = backing.pemRepresentation
        publicPEM = backing.publicKey.pemRepresentation
        privateKey = try JWTKit.Insecure.RSA.PrivateKey(pem: privatePEM)
        publicKey = try JWTKit.Insecure.RSA.PublicKey(pem: publicPEM)
    }

    /// The key as one entry of a JWK set.
    public func jwk() throws -> [String: String] {
        let (modulus, exponent) = try publicKey.getKeyPrimitives()
        return ["kty": "RSA", "alg": "RS256", "use": "sig", "kid": kid, "n": Base64URL.encode(modulus), "e": Base64URL.encode(exponent)]
    }

    /// `{"keys":[…]}` for `keys`.
    public static func jwks(_ keys: [IDTokenKey]) throws -> Data {
        try JSONSerialization.data(withJSONObject: ["keys": try keys.map { try $0.jwk() }], options: [.sortedKeys])
    }

    /// Signs `claims` (RS256, this key's `kid`).
    public func sign(_ claims: [String: any Sendable]) async throws -> String {
        let collection = JWTKeyCollection()
        await collection.add(rsa: privateKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        return try await collection.sign(IDTokenClaims(claims), kid: JWKIdentifier(string: kid))
    }
}

/// Base64url without padding (RFC 7515 §2).
public enum Base64URL {
    public static func encode(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// A JWT payload of arbitrary claims (strings, whole numbers, booleans, string lists).
public struct IDTokenClaims: JWTPayload {
    public let claims: [String: any Sendable]
    public init(_ claims: [String: any Sendable]) { self.claims = claims }
    public init(from decoder: any Decoder) throws { claims = [:] }

    public func encode(to encoder: any Encoder) throws {
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

    public func verify(using algorithm: some JWTAlgorithm) async throws {}

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
