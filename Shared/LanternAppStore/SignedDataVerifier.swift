import Crypto
import Foundation
import JWTKit
import LanternCore
import SwiftASN1
import Synchronization
import X509

/// Verifies what the App Store signs — StoreKit 2 transactions and App Store Server Notifications V2 — the way
/// Apple's own `SignedDataVerifier` does offline:
/// 1. a compact JWS with `alg: ES256` and exactly three certificates in `x5c` (leaf, intermediate, root);
/// 2. the chain leads to one of the pinned roots (Apple Root CA – G3 by default), the intermediate carries Apple's
///    marker extension 1.2.840.113635.100.6.2.1 and the leaf 1.2.840.113635.100.6.11.1, and every certificate is
///    valid **at the payload's `signedDate`** (so a transaction signed last month still verifies after a leaf
///    rotated), which in turn may be at most `maximumAge` old and not in the future;
/// 3. the signature verifies with the leaf's key (jwt-kit's `X5CVerifier` does 2 and 3);
/// 4. `bundleId` and `environment` are the configured ones.
///
/// No OCSP: Apple's library checks revocation only when asked to go online; the pinned root, the markers and the
/// short age are what an offline check has.
///
/// A chain once verified is remembered (its leaf's key and the span in which all three certificates are valid):
/// everything the chain check decides but validity is the same for the same certificates, so the next JWS signed by
/// that leaf costs one ES256 check instead of parsing and verifying three certificates (Apple's library caches the
/// same way).
public struct SignedDataVerifier: Sendable {
    /// Apple's marker on the intermediate ("Apple Worldwide Developer Relations" for the App Store).
    public static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
    /// Apple's marker on the leaf that signs App Store receipts and transactions.
    public static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]

    public let bundleId: String
    /// The app's Apple ID (App Store Connect): production notifications must name it. nil: not checked.
    public let appAppleId: Int64?
    public let environments: Set<AppStoreEnvironment>
    public let maximumAge: TimeInterval
    private let verifier: X5CVerifier
    private let clock: WallClock
    private let chains = VerifiedChains(capacity: 32)
    /// Tolerated clock difference between Apple and this machine for "signed in the future".
    private let skew: TimeInterval = 300

    /// - Parameters:
    ///   - rootCertificates: DER certificates to trust (`AppleRootCertificates.rootCAG3` in production; tests make
    ///     their own).
    ///   - environments: accepted environments. With `Production` among them, signatures from a developer's own
    ///     machine (`Xcode`, `LocalTesting`) are refused whatever else is listed.
    ///   - appAppleId: the app's Apple ID; production notifications that name another app are refused (as Apple's
    ///     library requires for production).
    ///   - maximumAge: how old a `signedDate` may be.
    public init(rootCertificates: [Data], bundleId: String, appAppleId: Int64? = nil, environments: Set<AppStoreEnvironment>,
                maximumAge: TimeInterval, clock: WallClock = .system) throws {
        verifier = try X5CVerifier(rootCertificates: rootCertificates)
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environments = environments.contains(.production) ? environments.filter { !$0.isLocal } : environments
        self.maximumAge = maximumAge
        self.clock = clock
    }

    /// A StoreKit 2 transaction (`Transaction.jwsRepresentation`), verified; its contents are the caller's to judge.
    public func verifyTransaction(_ jws: String) async throws(AppStoreVerificationError) -> SignedTransaction {
        let transaction = try await verify(jws, as: SignedTransaction.self)
        try check(bundleId: transaction.bundleId, environment: transaction.environment)
        return transaction
    }

    /// An App Store Server Notification V2 (`signedPayload`), and the transaction inside it when it has one.
    public func verifyNotification(_ signedPayload: String) async throws(AppStoreVerificationError)
        -> (notification: SignedNotification, transaction: SignedTransaction?) {
        let notification = try await verify(signedPayload, as: SignedNotification.self)
        // A TEST notification (or one about an app-level event) may carry only some of `data`.
        if let data = notification.data {
            guard let bundle = data.bundleId, let environment = data.environment else {
                throw AppStoreVerificationError(.malformed, "the notification's data names no bundle or environment")
            }
            try check(bundleId: bundle, environment: environment)
            if environment == .production, let appAppleId, data.appAppleId != appAppleId {
                throw AppStoreVerificationError(.wrongBundle, "sent for app \(data.appAppleId.map(String.init) ?? "(none)"), not \(appAppleId)")
            }
        } else if notification.notificationType != "TEST" {
            throw AppStoreVerificationError(.malformed, "the notification carries no data")
        }
        guard let inner = notification.data?.signedTransactionInfo else { return (notification, nil) }
        return (notification, try await verifyTransaction(inner))
    }

    private func check(bundleId: String, environment: AppStoreEnvironment) throws(AppStoreVerificationError) {
        guard bundleId == self.bundleId else {
            throw AppStoreVerificationError(.wrongBundle, "signed for bundle '\(bundleId)', not '\(self.bundleId)'")
        }
        guard environments.contains(environment) else {
            throw AppStoreVerificationError(.wrongEnvironment, "signed in the \(environment.rawValue) environment, which this server does not accept")
        }
    }

    private func verify<Payload: AppStoreSignedPayload>(_ jws: String, as type: Payload.Type) async throws(AppStoreVerificationError) -> Payload {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Data(base64URL: parts[0]), let payloadData = Data(base64URL: parts[1]) else {
            throw AppStoreVerificationError(.malformed, "not a compact JWS")
        }
        guard let header = try? JSONDecoder().decode(JWSHeader.self, from: headerData) else {
            throw AppStoreVerificationError(.malformed, "the JWS header is not JSON")
        }
        guard header.alg == "ES256" else {
            throw AppStoreVerificationError(.unsupportedAlgorithm, "signed with \(header.alg ?? "no algorithm"), not ES256")
        }
        guard header.x5c?.count == 3 else {
            throw AppStoreVerificationError(.chain, "x5c must hold leaf, intermediate and root (\(header.x5c?.count ?? 0) certificates)")
        }
        // The date the chain is judged at comes from the payload, read before the signature is known to be good:
        // nothing is trusted from it until the verification below, which re-reads the same bytes.
        guard let signed = (try? JSONDecoder().decode(SignedDateOnly.self, from: payloadData))?.signedDate else {
            throw AppStoreVerificationError(.malformed, "the payload has no signedDate")
        }
        let signedAt = Date(timeIntervalSince1970: Double(signed) / 1000)
        let age = clock.now().timeIntervalSince(signedAt)
        guard age >= -skew else { throw AppStoreVerificationError(.notYetValid, "signed in the future (\(signedAt))") }
        guard age <= maximumAge else {
            throw AppStoreVerificationError(.tooOld, "signed \(Int(age / 86_400)) days ago; at most \(Int(maximumAge / 86_400)) days are accepted")
        }
        // The payload's shape first, with the field it lacks named: the verification below would wrap the same
        // decoding error in jwt-kit's own (an unreadable dump for the client).
        do { _ = try JSONDecoder().decode(Payload.self, from: payloadData) } catch let error as DecodingError {
            throw AppStoreVerificationError(.malformed, "the payload is not what Apple signs: \(Self.describe(error))")
        } catch {
            throw AppStoreVerificationError(.malformed, "the payload is not what Apple signs")
        }
        let chainKey = (header.x5c ?? []).joined(separator: ".")
        if let known = chains[chainKey], known.validity.contains(signedAt) {
            return try Self.verifySignature(jws, parts: parts, key: known.key, payload: payloadData, as: Payload.self)
        }
        do {
            let payload = try await verifier.verifyJWS(Array(jws.utf8), as: Payload.self, jsonDecoder: JSONDecoder(),
                                                       validationTime: .fixed(signedAt)) { AppleMarkerPolicy() }
            chains.remember(chainKey, x5c: header.x5c ?? [])
            return payload
        } catch let error as JWTError where error.errorType == .invalidX5CChain {
            throw AppStoreVerificationError(.chain, Self.chainRefusal(x5c: header.x5c ?? [], signedAt: signedAt))
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw AppStoreVerificationError(.signature, "the signature does not match the leaf certificate")
        } catch let error as DecodingError {
            throw AppStoreVerificationError(.malformed, "the payload is not what Apple signs: \(Self.describe(error))")
        } catch {
            // Certificates that are not DER, a key of another curve…: what the library says is a type dump.
            throw AppStoreVerificationError(.chain, "the x5c certificates or the signature cannot be read as Apple's (ES256 over P-256, DER certificates)")
        }
    }

    /// A sentence for why the chain was refused, read from the certificates themselves (swift-certificates' own
    /// policy failures are long dumps of them): not DER, Apple's markers missing, a certificate not valid when the
    /// payload was signed, or else no path to a trusted root.
    static func chainRefusal(x5c: [String], signedAt: Date) -> String {
        let certificates = x5c.compactMap { Data(base64Encoded: $0).flatMap { try? Certificate(derEncoded: Array($0)) } }
        guard certificates.count == x5c.count, certificates.count == 3 else {
            return "the x5c certificates cannot be read (three DER certificates in base64: leaf, intermediate, root)"
        }
        if certificates[0].extensions[oid: leafMarker] == nil {
            return "the certificate chain is not Apple's: the leaf lacks Apple's marker 1.2.840.113635.100.6.11.1"
        }
        if certificates[1].extensions[oid: intermediateMarker] == nil {
            return "the certificate chain is not Apple's: the intermediate lacks Apple's marker 1.2.840.113635.100.6.2.1"
        }
        if let stale = certificates.firstIndex(where: { !($0.notValidBefore...$0.notValidAfter).contains(signedAt) }) {
            let which = ["leaf", "intermediate", "root"][stale]
            return "the \(which) certificate was not valid when the payload was signed (\(RFC3339.string(from: signedAt)))"
        }
        return "the certificate chain does not lead to a trusted Apple root"
    }

    /// ES256 over `header.payload` with a leaf key whose chain was verified before, then the payload decoded.
    private static func verifySignature<Payload: Decodable>(_ jws: String, parts: [Substring], key: P256.Signing.PublicKey, payload: Data,
                                                            as type: Payload.Type) throws(AppStoreVerificationError) -> Payload {
        guard let raw = Data(base64URL: parts[2]), let signature = try? P256.Signing.ECDSASignature(rawRepresentation: raw),
              key.isValidSignature(signature, for: Data(jws.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))) else {
            throw AppStoreVerificationError(.signature, "the signature does not match the leaf certificate")
        }
        do { return try JSONDecoder().decode(Payload.self, from: payload) } catch let error as DecodingError {
            throw AppStoreVerificationError(.malformed, "the payload is not what Apple signs: \(describe(error))")
        } catch {
            throw AppStoreVerificationError(.malformed, "the payload is not what Apple signs")
        }
    }

    /// The field and what is wrong with it, in words (never the decoder's debug description).
    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context, _ key: (any CodingKey)? = nil) -> String {
            (context.codingPath + (key.map { [$0] } ?? [])).map(\.stringValue).filter { !$0.isEmpty }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context): return "'\(path(context, key))' is missing"
        case .valueNotFound(_, let context): return "'\(path(context))' is null"
        case .typeMismatch(let type, let context): return "'\(path(context))' is not \(type == String.self ? "a string" : "a number or a value of the expected kind")"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "it is not JSON" : "'\(path(context))' has a value Apple never signs"
        @unknown default: return "it does not have the expected fields"
        }
    }
}

/// Chains that verified: by their `x5c`, the leaf's key and when all three certificates are valid. Bounded; the
/// oldest goes first (Apple signs with a handful of leaves at a time).
final class VerifiedChains: Sendable {
    struct Entry: Sendable {
        var key: P256.Signing.PublicKey
        var validity: ClosedRange<Date>
    }

    private let state = Mutex<(entries: [String: Entry], order: [String])>(([:], []))
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    subscript(_ key: String) -> Entry? { state.withLock { $0.entries[key] } }

    func remember(_ key: String, x5c: [String]) {
        let certificates = x5c.compactMap { Data(base64Encoded: $0) }.compactMap { try? Certificate(derEncoded: Array($0)) }
        guard certificates.count == x5c.count, let leaf = certificates.first, let publicKey = P256.Signing.PublicKey(leaf.publicKey),
              let from = certificates.map(\.notValidBefore).max(), let until = certificates.map(\.notValidAfter).min(), from <= until else { return }
        state.withLock { state in
            if state.entries.updateValue(Entry(key: publicKey, validity: from...until), forKey: key) == nil { state.order.append(key) }
            while state.order.count > capacity { state.entries[state.order.removeFirst()] = nil }
        }
    }
}

private struct JWSHeader: Decodable {
    var alg: String?
    var x5c: [String]?
}

private struct SignedDateOnly: Decodable {
    var signedDate: Int64?
}

/// Apple's markers on the intermediate and the leaf: a chain to Apple's root is not enough by itself, since the
/// same root issues developer certificates that anyone can get.
struct AppleMarkerPolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = []

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        let certificates = Array(chain)
        guard certificates.count == 3 else {
            return .failsToMeetPolicy(reason: "the chain has \(certificates.count) certificates, not 3")
        }
        guard certificates[0].extensions[oid: SignedDataVerifier.leafMarker] != nil else {
            return .failsToMeetPolicy(reason: "the leaf lacks Apple's marker 1.2.840.113635.100.6.11.1")
        }
        guard certificates[1].extensions[oid: SignedDataVerifier.intermediateMarker] != nil else {
            return .failsToMeetPolicy(reason: "the intermediate lacks Apple's marker 1.2.840.113635.100.6.2.1")
        }
        return .meetsPolicy
    }
}

/// Why signed App Store data was refused; `message` is safe to show the client.
public struct AppStoreVerificationError: Error, CustomStringConvertible, Equatable {
    public enum Reason: String, Sendable {
        case malformed, unsupportedAlgorithm, chain, signature, tooOld, notYetValid, wrongBundle, wrongEnvironment
    }

    public var reason: Reason
    public var message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { "\(reason.rawValue): \(message)" }
}

extension Data {
    /// base64url without padding (RFC 7515 §2), as JWS segments are.
    init?(base64URL text: Substring) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
