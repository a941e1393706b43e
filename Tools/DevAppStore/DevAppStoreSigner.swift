import Crypto
import Foundation
import LanternAppStore
import SwiftASN1
import X509

/// A made-up App Store signing authority shaped like Apple's: a P-384 root, an intermediate with Apple's marker
/// 1.2.840.113635.100.6.2.1 and a P-256 leaf with 1.2.840.113635.100.6.11.1, signing ES256 JWS with all three
/// in `x5c`. content trusts `rootPEM` instead of Apple Root CA – G3 only in development
/// (`APPSTORE_ROOT_CERTIFICATES`), as Xcode's StoreKit testing certificate is trusted: the development stack buys
/// reports with it (`make appstore-purchase`, `make demo`), tests make flawed chains with it (`TestAppStore`).
///
/// Each flaw a test needs is a knob: a leaf or intermediate without its marker, a leaf whose validity ended.
public struct DevAppStoreSigner: Sendable {
    public struct Options: Sendable {
        public var leafMarker = true
        public var intermediateMarker = true
        /// The leaf's validity window relative to now (seconds).
        public var leafValidity: ClosedRange<TimeInterval> = -86_400 * 30 ... 86_400 * 365
        public init() {}
    }

    public let rootDER: Data
    public let rootPEM: String
    private let chain: [String]
    private let leafKey: P256.Signing.PrivateKey

    public init(options: Options = .init(), now: Date = Date()) throws {
        let rootKey = P384.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("Lantern Development Root CA - G3"); OrganizationName("Lantern development") }
        let root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey),
            notValidBefore: now - 86_400 * 3650, notValidAfter: now + 86_400 * 3650, issuer: rootName, subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(rootKey))
        let intermediateKey = P384.Signing.PrivateKey()
        let intermediateName = try DistinguishedName { CommonName("Lantern Development Worldwide Developer Relations"); OrganizationName("Lantern development") }
        let intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey),
            notValidBefore: now - 86_400 * 1000, notValidAfter: now + 86_400 * 1000, issuer: rootName, subject: intermediateName,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                if options.intermediateMarker {
                    Certificate.Extension(oid: SignedDataVerifier.intermediateMarker, critical: false, value: [0x05, 0x00])
                }
            },
            issuerPrivateKey: .init(rootKey))
        let leafKey = P256.Signing.PrivateKey()
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey),
            notValidBefore: now + options.leafValidity.lowerBound, notValidAfter: now + options.leafValidity.upperBound,
            issuer: intermediateName, subject: try DistinguishedName { CommonName("Lantern Development StoreKit Signing") },
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                if options.leafMarker {
                    Certificate.Extension(oid: SignedDataVerifier.leafMarker, critical: false, value: [0x05, 0x00])
                }
            },
            issuerPrivateKey: .init(intermediateKey))
        func der(_ certificate: Certificate) throws -> Data {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return Data(serializer.serializedBytes)
        }
        self.init(rootDER: try der(root), rootPEM: try root.serializeAsPEM().pemString,
                  chain: try [leaf, intermediate, root].map { try der($0).base64EncodedString() }, leafKey: leafKey)
    }

    private init(rootDER: Data, rootPEM: String, chain: [String], leafKey: P256.Signing.PrivateKey) {
        self.rootDER = rootDER
        self.rootPEM = rootPEM
        self.chain = chain
        self.leafKey = leafKey
    }

    /// What a signer keeps on disk: the chain and the leaf's key (`signer.json`, readable by its owner only).
    struct Stored: Codable {
        var rootPEM: String
        var chain: [String]
        var leafKeyPEM: String
    }

    /// The signer of `folder`, made there on first use: `signer.json` (its chain and key) and `root.pem`, the
    /// certificate content is told to trust (`APPSTORE_ROOT_CERTIFICATES`). Made once, so transactions signed by
    /// one `make appstore-purchase` verify against the root the running stack read at start.
    public init(folder: URL) throws {
        let file = folder.appendingPathComponent("signer.json")
        if let data = FileManager.default.contents(atPath: file.path) {
            let stored = try JSONDecoder().decode(Stored.self, from: data)
            guard let root = stored.chain.last.flatMap({ Data(base64Encoded: $0) }) else {
                throw DevAppStoreError("\(file.path) holds no certificate chain: delete the folder to make a new signer")
            }
            self.init(rootDER: root, rootPEM: stored.rootPEM, chain: stored.chain, leafKey: try P256.Signing.PrivateKey(pemRepresentation: stored.leafKeyPEM))
            return
        }
        try self.init()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let stored = Stored(rootPEM: rootPEM, chain: chain, leafKeyPEM: leafKey.pemRepresentation)
        try JSONEncoder().encode(stored).write(to: file, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        try rootPEM.write(to: Self.rootFile(in: folder), atomically: true, encoding: .utf8)
    }

    /// The root certificate of the signer of `folder`.
    public static func rootFile(in folder: URL) -> URL { folder.appendingPathComponent("root.pem") }

    /// `payload` as the App Store would sign it: ES256 (raw r‖s) over `header.payload`, with leaf, intermediate
    /// and root in `x5c`. Signed by hand, not through jwt-kit, which checks an `x5c` chain before signing and
    /// would refuse to make the flawed ones tests need.
    public func sign(_ payload: some Encodable) throws -> String {
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "x5c": chain], options: [.sortedKeys])
        let input = Self.base64URL(header) + "." + Self.base64URL(try JSONEncoder().encode(payload))
        let signature = try leafKey.signature(for: Data(input.utf8))
        return input + "." + Self.base64URL(signature.rawRepresentation)
    }

    public static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// An App Store Server Notification V2 about `transaction` (signed here as its `signedTransactionInfo`), as the App
    /// Store posts it to the app's server: `REFUND` with the transaction's `revocationDate`, `REFUND_REVERSED`…
    public func notification(_ type: String, subtype: String? = nil, transaction: SignedTransaction, at date: Date = Date()) throws -> SignedNotification {
        SignedNotification(notificationType: type, subtype: subtype, notificationUUID: UUID().uuidString.lowercased(),
                           data: .init(bundleId: transaction.bundleId, environment: transaction.environment,
                                       signedTransactionInfo: try sign(transaction)),
                           signedDate: Int64(date.timeIntervalSince1970 * 1000))
    }

    /// A transaction for a consumable, signed now, as StoreKit 2 hands it to an app.
    public func transaction(id: String = String(Int.random(in: 2_000_000_000_000_000...2_999_999_999_999_999)),
                            bundleId: String, productId: String, accountToken: UUID?,
                            environment: AppStoreEnvironment = .sandbox, type: String = SignedTransaction.consumable,
                            signedAt: Date = Date(), revokedAt: Date? = nil) -> SignedTransaction {
        let ms = Int64(signedAt.timeIntervalSince1970 * 1000)
        return SignedTransaction(transactionId: id, bundleId: bundleId, productId: productId, type: type, environment: environment,
                                 purchaseDate: ms, signedDate: ms, appAccountToken: accountToken?.uuidString.lowercased(),
                                 revocationDate: revokedAt.map { Int64($0.timeIntervalSince1970 * 1000) },
                                 revocationReason: revokedAt == nil ? nil : 0, quantity: 1, price: 9990, currency: "USD",
                                 storefront: "USA")
    }
}

public struct DevAppStoreError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
