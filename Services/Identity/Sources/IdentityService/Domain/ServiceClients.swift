import Crypto
import Foundation

/// The services allowed to ask for a service token, each with its secret (`SERVICE_SECRETS`).
///
/// Secrets are kept as SHA-256 digests and compared in constant time, so neither memory nor timing gives one away.
struct ServiceClients: Sendable {
    private let digests: [String: [UInt8]]

    init(secrets: [String: String]) {
        digests = secrets.mapValues { Array(SHA256.hash(data: Data($0.utf8))) }
    }

    var isEmpty: Bool { digests.isEmpty }

    /// The service a `client_secret_basic` header names, when its secret is right.
    func authenticate(basicAuthorization header: String?) -> String? {
        guard let header, header.count < 1024, header.lowercased().hasPrefix("basic "),
              let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
              let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":") else { return nil }
        let service = String(text[..<colon]), secret = String(text[text.index(after: colon)...])
        let given = Array(SHA256.hash(data: Data(secret.utf8)))
        // Compare against a digest even for an unknown name, so the answer takes the same time.
        let expected = digests[service] ?? Array(repeating: 0, count: given.count)
        let equal = zip(given, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
        return equal && digests[service] != nil ? service : nil
    }
}
