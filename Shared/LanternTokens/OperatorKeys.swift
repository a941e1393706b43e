import Crypto
import Foundation
import LanternCore

/// The credentials of an operator API (remote configuration, never an app's token): `name:secret` pairs, the name
/// going into the audit trail as who made a change. Only the secrets' SHA-256 digests are kept, and a presented
/// secret is compared digest to digest (swift-crypto's digests compare in constant time), each key every time.
public struct OperatorKeys: Sendable {
    struct Key: Sendable {
        var name: String
        var digest: SHA256Digest
    }

    let keys: [Key]
    /// Shorter secrets are refused at start-up: they could be guessed.
    public static let minimumSecretLength = 32

    /// - Parameter entries: `name:secret` each (a configuration list such as `ROASTMELATER_OPERATOR_KEYS`).
    public init(_ entries: [String], variable: String) throws {
        var keys: [Key] = []
        for entry in entries {
            guard let colon = entry.firstIndex(of: ":") else {
                throw ConfigurationError(variable: variable, message: "holds an entry without a name: write name:secret, comma-separated")
            }
            let name = String(entry[..<colon]), secret = String(entry[entry.index(after: colon)...])
            guard !name.isEmpty, name.count <= 64, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.@".contains($0)) }) else {
                throw ConfigurationError(variable: variable, message: "names an operator '\(name)': use 1–64 of a–z, 0–9, -_.@")
            }
            guard secret.count >= Self.minimumSecretLength else {
                throw ConfigurationError(variable: variable, message: "gives \(name) a secret of \(secret.count) characters; at least \(Self.minimumSecretLength)")
            }
            guard !keys.contains(where: { $0.name == name }) else { throw ConfigurationError(variable: variable, message: "names \(name) twice") }
            keys.append(Key(name: name, digest: SHA256.hash(data: Data(secret.utf8))))
        }
        self.keys = keys
    }

    public var isEmpty: Bool { keys.isEmpty }

    /// The operator whose secret this is, or nil.
    public func operatorName(for secret: String) -> String? {
        let digest = SHA256.hash(data: Data(secret.utf8))
        var found: String?
        for key in keys where key.digest == digest && found == nil { found = key.name }
        return found
    }
}
