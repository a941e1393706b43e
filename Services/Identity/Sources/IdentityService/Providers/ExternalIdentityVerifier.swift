import Foundation
import JWTKit
import LanternCore
import LanternTokens

/// The verified facts of a Google or Apple ID token.
struct ExternalIdentity: Sendable, Equatable {
    var subject: String
    var email: String?
    var name: String?
}

/// Claims of an OpenID Connect ID token (Google and Apple share these).
struct IDTokenClaims: JWTPayload {
    var iss: String
    var sub: String
    var aud: AudienceClaim
    /// The client the token was issued to, when it is not the audience (Google: an app's iOS or Android client id).
    var azp: String?
    var exp: Double
    var iat: Double?
    var email: String?
    /// Whether the provider verified `email`: Google sends a boolean, Apple a boolean or the string "true".
    var emailVerified: Flag?
    var name: String?

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, azp, exp, iat, email, name
        case emailVerified = "email_verified"
    }

    /// A boolean claim sent as JSON `true`/`false` or as the string "true"/"false"; anything else is not true.
    struct Flag: Codable, Sendable, Equatable {
        var value: Bool
        init(_ value: Bool) { self.value = value }
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let bool = try? container.decode(Bool.self) { value = bool } else { value = (try? container.decode(String.self)) == "true" }
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }

    /// Claims are checked by `ExternalIdentityVerifier` with the injected clock.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Verifies Google / Sign in with Apple ID tokens: RS256 only, against the provider's key set, with issuer,
/// audience (one of our client ids), authorized party, subject and expiry checked (times with a small leeway).
struct ExternalIdentityVerifier: Sendable {
    let method: String
    let keySet: RemoteKeySet
    let issuers: Set<String>
    let audiences: Set<String>
    let clock: WallClock
    let leeway: TimeInterval

    func verify(_ token: String) async throws -> ExternalIdentity {
        let header = try JWTHeaderFields.parse(token)
        guard header.alg == "RS256" else {
            throw TokenError("invalid_id_token", "The \(method) ID token must be signed with RS256.")
        }
        let keys: JWTKeyCollection
        do {
            keys = try await keySet.keys(for: header.kid)
        } catch is KeySetUnavailable {
            throw Problem(status: 503, code: "identity_provider_unavailable", title: "Sign-in provider unavailable",
                          detail: "The \(method) signing keys could not be fetched; try again shortly.")
        } catch {
            throw TokenError("invalid_id_token", "The \(method) ID token is signed with an unknown key.")
        }
        let claims: IDTokenClaims
        do {
            claims = try await keys.verify(token, as: IDTokenClaims.self)
        } catch {
            throw TokenError("invalid_id_token", "The \(method) ID token's signature is not valid.")
        }
        guard issuers.contains(claims.iss) else {
            throw TokenError("invalid_id_token", "The \(method) ID token has the wrong issuer.")
        }
        guard claims.aud.value.contains(where: audiences.contains) else {
            throw TokenError("invalid_id_token", "The \(method) ID token was issued for another app (audience).")
        }
        // OpenID Connect Core §3.1.3.7: with several audiences the authorized party must be named, and a named one
        // must be one of our clients — else a token issued to another app that also lists ours would sign in here.
        if claims.aud.value.count > 1 || claims.azp != nil {
            guard let azp = claims.azp, audiences.contains(azp) else {
                throw TokenError("invalid_id_token", "The \(method) ID token was issued to another app (authorized party).")
            }
        }
        // §2: `sub` is a locally unique identifier of at most 255 ASCII characters; an account hangs on it.
        guard !claims.sub.isEmpty, claims.sub.utf8.count <= 255, claims.sub.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 32 }) else {
            throw TokenError("invalid_id_token", "The \(method) ID token names no valid subject (sub).")
        }
        let now = clock.now().timeIntervalSince1970
        guard claims.exp + leeway >= now else {
            throw TokenError("id_token_expired", "The \(method) ID token has expired; sign in again.")
        }
        if let iat = claims.iat, iat - leeway > now {
            throw TokenError("invalid_id_token", "The \(method) ID token was issued in the future.")
        }
        // An address the provider has not verified is anyone's claim: it is not kept (nor shown as the account's).
        return ExternalIdentity(subject: claims.sub, email: claims.emailVerified?.value == true ? claims.email : nil, name: claims.name)
    }
}
