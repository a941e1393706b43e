import Foundation
import JWTKit
import LanternCore

/// Claims of a Lantern access token (signed by `identity`, verified by the gateway and every service).
public struct AccessClaims: JWTPayload, Equatable {
    /// User id (UUID) — or `service:<name>` for service tokens.
    public var sub: String
    /// Session id; revoking the session ends its refresh chain.
    public var sid: String?
    /// The app the account belongs to.
    public var app: String?
    public var iss: String
    /// `lantern` for app tokens, `internal` for service-to-service tokens.
    public var aud: String
    public var iat: Int
    public var exp: Int

    public init(sub: String, sid: String?, app: String?, iss: String, aud: String, issuedAt: Date, expiresAt: Date) {
        self.sub = sub
        self.sid = sid
        self.app = app
        self.iss = iss
        self.aud = aud
        self.iat = Int(issuedAt.timeIntervalSince1970)
        self.exp = Int(expiresAt.timeIntervalSince1970)
    }

    /// Time claims are checked by `AccessTokenVerifier` against the injected clock, not here.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}

    public var userID: UUID? { UUID(uuidString: sub) }
    public var isService: Bool { sub.hasPrefix("service:") }
}

public enum TokenAudience {
    public static let app = "lantern"
    public static let service = "internal"
    public static let issuer = "lantern-identity"
}

/// Why a token was refused; mapped to a 401 problem with a stable code.
public struct TokenError: ProblemConvertible, Sendable, CustomStringConvertible {
    public let code: String
    public let reason: String
    public init(_ code: String, _ reason: String) {
        self.code = code
        self.reason = reason
    }
    public var description: String { "\(code): \(reason)" }

    public var problem: Problem { .unauthorized(reason, code: code) }
}

/// The parts of a JWT header Lantern looks at before trusting any key.
public struct JWTHeaderFields: Decodable, Sendable {
    public var alg: String?
    public var kid: String?
    public var typ: String?

    /// Decodes the header without verifying anything.
    public static func parse(_ token: String) throws -> JWTHeaderFields {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let data = Base64URL.decode(String(parts[0])),
              let header = try? JSONDecoder().decode(JWTHeaderFields.self, from: data)
        else { throw TokenError("malformed_token", "The token is not a well-formed JWT.") }
        return header
    }
}

public enum Base64URL {
    public static func decode(_ text: String) -> Data? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s)
    }

    public static func encode(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
