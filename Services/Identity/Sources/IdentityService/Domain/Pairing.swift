import Foundation

/// The partner as the other side sees them (`GET /v1/pairing`).
public struct Partnership: Codable, Sendable, Equatable {
    public var pairingId: String
    public var partnerId: String
    public var partnerName: String?
    public var since: Date
}

public struct Invite: Codable, Sendable, Equatable {
    public var code: String
    public var expiresAt: Date
}

/// Why joining with a code failed; each is its own problem for the app to explain.
enum JoinFailure: Error, Equatable {
    case unknown, expired, used, ownCode, alreadyPaired, partnerAlreadyPaired, accountDeleted
}

/// Six characters people can read out loud: capitals and digits without the look-alikes 0/O, 1/I/L.
enum InviteCode {
    static let alphabet = Array("ABCDEFGHJKMNPQRSTUVWXYZ23456789")

    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<6).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    /// Upper-cases and trims what the user typed; nil when it cannot be a code.
    static func normalize(_ text: String) -> String? {
        let code = text.trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
        guard code.count == 6, code.allSatisfy({ alphabet.contains($0) }) else { return nil }
        return code
    }
}
