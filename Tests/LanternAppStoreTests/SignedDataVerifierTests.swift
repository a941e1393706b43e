import Crypto
import Foundation
import JWTKit
import LanternAppStore
import LanternCore
import LanternTestSupport
import Testing

private let bundle = "app.lantern.astrosvitla"
private let product = "app.lantern.astrosvitla.report.career"

/// The reason `body` was refused with (nil when it was accepted).
private func refusal(_ body: () async throws -> some Any) async -> AppStoreVerificationError.Reason? {
    do {
        _ = try await body()
        return nil
    } catch let error as AppStoreVerificationError {
        return error.reason
    } catch {
        Issue.record("not an AppStoreVerificationError: \(error)")
        return nil
    }
}

private func verifier(trusting store: TestAppStore, environments: Set<AppStoreEnvironment> = [.production, .sandbox],
                      maximumAge: TimeInterval = 7 * 86_400, clock: WallClock = .system) throws -> SignedDataVerifier {
    try SignedDataVerifier(rootCertificates: [store.rootDER], bundleId: bundle, environments: environments,
                           maximumAge: maximumAge, clock: clock)
}

@Suite("LanternAppStore: signed transactions and notifications, verified as Apple's SignedDataVerifier does")
struct SignedDataVerifierTests {
    @Test("the pinned root is Apple Root CA – G3 (SHA-256 fingerprint as Apple publishes it)")
    func pinnedRoot() {
        let fingerprint = SHA256.hash(data: AppleRootCertificates.rootCAG3).map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(fingerprint == "63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79")
        #expect(throws: Never.self) {
            try SignedDataVerifier(rootCertificates: [AppleRootCertificates.rootCAG3], bundleId: bundle, environments: [.production],
                                   maximumAge: 86_400)
        }
    }

    @Test("a transaction signed by the trusted chain verifies, every field intact")
    func valid() async throws {
        let store = try TestAppStore()
        let account = UUID()
        let transaction = store.transaction(bundleId: bundle, productId: product, accountToken: account)
        let verified = try await verifier(trusting: store).verifyTransaction(try store.sign(transaction))
        #expect(verified == transaction)
        #expect(verified.appAccountToken == account.uuidString.lowercased())
    }

    @Test("a chain to another root, or without Apple's markers, or with a leaf expired when signed, is refused")
    func chains() async throws {
        let trusted = try TestAppStore()
        let impostor = try TestAppStore()
        let signed = try impostor.sign(impostor.transaction(bundleId: bundle, productId: product, accountToken: UUID()))
        #expect(await refusal { try await verifier(trusting: trusted).verifyTransaction(signed) } == .chain)

        var noLeafMarker = TestAppStore.Options()
        noLeafMarker.leafMarker = false
        var noIntermediateMarker = TestAppStore.Options()
        noIntermediateMarker.intermediateMarker = false
        var expired = TestAppStore.Options()
        expired.leafValidity = -86_400 * 400 ... -86_400
        for options in [noLeafMarker, noIntermediateMarker, expired] {
            let flawed = try TestAppStore(options: options)
            let jws = try flawed.sign(flawed.transaction(bundleId: bundle, productId: product, accountToken: UUID()))
            #expect(await refusal { try await verifier(trusting: flawed).verifyTransaction(jws) } == .chain)
        }
    }

    @Test("each refusal says in a sentence what was wrong (issue #23 item 3): no markers, an expired leaf, x5c of garbage, a field missing, an unknown environment")
    func readableRefusals() async throws {
        func message(_ body: () async throws -> some Any) async -> String {
            do {
                _ = try await body()
                return "accepted"
            } catch let error as AppStoreVerificationError {
                return error.message
            } catch {
                return "\(error)"
            }
        }
        func readable(_ text: String) -> Bool {
            text.count < 300 && ["Error(", "Error.", ".swift:", "DecodingError", "JWTKit", "ASN1", "PolicyFailure", "0x", "Cannot initialize",
                                 "CodingKeys", "debugDescription", "Optional("].allSatisfy { !text.contains($0) }
        }
        var noLeafMarker = TestAppStore.Options()
        noLeafMarker.leafMarker = false
        let unmarked = try TestAppStore(options: noLeafMarker)
        let unmarkedMessage = await message {
            try await verifier(trusting: unmarked).verifyTransaction(try unmarked.sign(unmarked.transaction(bundleId: bundle, productId: product, accountToken: UUID())))
        }
        #expect(readable(unmarkedMessage) && unmarkedMessage.contains("the leaf lacks Apple's marker 1.2.840.113635.100.6.11.1"), "\(unmarkedMessage)")

        var expiredOptions = TestAppStore.Options()
        expiredOptions.leafValidity = -86_400 * 400 ... -86_400
        let expired = try TestAppStore(options: expiredOptions)
        let expiredMessage = await message {
            try await verifier(trusting: expired).verifyTransaction(try expired.sign(expired.transaction(bundleId: bundle, productId: product, accountToken: UUID())))
        }
        #expect(readable(expiredMessage) && expiredMessage.contains("the leaf certificate was not valid when the payload was signed"), "\(expiredMessage)")

        // x5c of three certificates that are not DER at all, signed by a key of its own.
        let store = try TestAppStore()
        let payload = try JSONEncoder().encode(store.transaction(bundleId: bundle, productId: product, accountToken: UUID()))
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "x5c": ["Z2FyYmFnZQ==", "Z2FyYmFnZQ==", "Z2FyYmFnZQ=="]])
        let input = TestAppStore.base64URL(header) + "." + TestAppStore.base64URL(payload)
        let garbage = input + "." + TestAppStore.base64URL(try P256.Signing.PrivateKey().signature(for: Data(input.utf8)).rawRepresentation)
        let garbageMessage = await message { try await verifier(trusting: store).verifyTransaction(garbage) }
        #expect(readable(garbageMessage) && garbageMessage.contains("x5c"), "\(garbageMessage)")

        // A notification without notificationType, and a transaction of an environment that does not exist.
        struct Untyped: Encodable { var notificationUUID = UUID().uuidString; var signedDate = Int64(Date().timeIntervalSince1970 * 1000) }
        let untypedMessage = await message { try await verifier(trusting: store).verifyNotification(try store.sign(Untyped())) }
        #expect(readable(untypedMessage) && untypedMessage.contains("'notificationType' is missing"), "\(untypedMessage)")
        var bogus = try JSONSerialization.jsonObject(with: payload) as? [String: Any] ?? [:]
        bogus["environment"] = "Bogus"
        let bogusMessage = await message {
            try await verifier(trusting: store).verifyTransaction(try store.sign(RawJSON(bogus)))
        }
        #expect(readable(bogusMessage) && bogusMessage.contains("'environment'"), "\(bogusMessage)")
    }

    @Test("a payload changed after signing, or a signature from a key not in the chain, is refused")
    func tampered() async throws {
        let store = try TestAppStore()
        let jws = try store.sign(store.transaction(bundleId: bundle, productId: product, accountToken: UUID()))
        let parts = jws.split(separator: ".").map(String.init)
        var payload = try JSONSerialization.jsonObject(with: Data(base64URL: parts[1])) as! [String: Any]
        payload["productId"] = "app.lantern.astrosvitla.report.general"
        let forged = [parts[0], try JSONSerialization.data(withJSONObject: payload).base64URL, parts[2]].joined(separator: ".")
        #expect(await refusal { try await verifier(trusting: store).verifyTransaction(forged) } == .signature)

        // Another key signs the original payload; the header still shows the genuine chain.
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: ES256PrivateKey())
        let other = try await keys.sign(store.transaction(bundleId: bundle, productId: product, accountToken: UUID()))
        let spliced = [parts[0], String(other.split(separator: ".")[1]), String(other.split(separator: ".")[2])].joined(separator: ".")
        #expect(await refusal { try await verifier(trusting: store).verifyTransaction(spliced) } == .signature)
    }

    @Test("a chain verified once is remembered, and what the remembered chain lets through is only its own leaf's signatures within its validity")
    func rememberedChain() async throws {
        var shortLived = TestAppStore.Options()
        shortLived.leafValidity = -86_400 ... 86_400
        let store = try TestAppStore(options: shortLived)
        let now = ManualTime(Date())
        let check = try verifier(trusting: store, maximumAge: 30 * 86_400, clock: .manual(now))
        let account = UUID()
        let first = store.transaction(bundleId: bundle, productId: product, accountToken: account)
        #expect(try await check.verifyTransaction(try store.sign(first)) == first)
        // Same chain: a second transaction verifies; a changed payload or another key's signature does not.
        let second = store.transaction(bundleId: bundle, productId: product, accountToken: account)
        #expect(try await check.verifyTransaction(try store.sign(second)) == second)
        let parts = try store.sign(second).split(separator: ".").map(String.init)
        var payload = try JSONSerialization.jsonObject(with: Data(base64URL: parts[1])) as! [String: Any]
        payload["productId"] = "app.lantern.astrosvitla.report.general"
        let forged = [parts[0], try JSONSerialization.data(withJSONObject: payload).base64URL, parts[2]].joined(separator: ".")
        #expect(await refusal { try await check.verifyTransaction(forged) } == .signature)
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: ES256PrivateKey())
        let other = try await keys.sign(second).split(separator: ".")
        #expect(await refusal { try await check.verifyTransaction([parts[0], String(other[1]), String(other[2])].joined(separator: ".")) } == .signature)
        // Signed after the leaf expired: outside the remembered window, so the full check runs and refuses it.
        now.advance(by: 3 * 86_400)
        let late = store.transaction(bundleId: bundle, productId: product, accountToken: account, signedAt: now.now)
        #expect(await refusal { try await check.verifyTransaction(try store.sign(late)) } == .chain)
    }

    @Test("alg none, HS256 and missing x5c are refused before any key is used")
    func algorithms() async throws {
        let store = try TestAppStore()
        let jws = try store.sign(store.transaction(bundleId: bundle, productId: product, accountToken: UUID()))
        let parts = jws.split(separator: ".").map(String.init)
        let header = try JSONSerialization.jsonObject(with: Data(base64URL: parts[0])) as! [String: Any]
        for alg in ["none", "HS256", "ES384"] {
            var changed = header
            changed["alg"] = alg
            let token = [try JSONSerialization.data(withJSONObject: changed).base64URL, parts[1], alg == "none" ? "" : parts[2]].joined(separator: ".")
            #expect(await refusal { try await verifier(trusting: store).verifyTransaction(token) } == .unsupportedAlgorithm)
        }
        var bare = header
        bare.removeValue(forKey: "x5c")
        let token = [try JSONSerialization.data(withJSONObject: bare).base64URL, parts[1], parts[2]].joined(separator: ".")
        #expect(await refusal { try await verifier(trusting: store).verifyTransaction(token) } == .chain)
        #expect(await refusal { try await verifier(trusting: store).verifyTransaction("not.a-jws") } == .malformed)
        #expect(await refusal { try await verifier(trusting: store).verifyTransaction("") } == .malformed)
    }

    @Test("another app's bundle and an environment not accepted are refused; Xcode never with Production")
    func bundleAndEnvironment() async throws {
        let store = try TestAppStore()
        let other = try store.sign(store.transaction(bundleId: "com.example.other", productId: product, accountToken: UUID()))
        #expect(await refusal { try await verifier(trusting: store).verifyTransaction(other) } == .wrongBundle)

        let xcode = try store.sign(store.transaction(bundleId: bundle, productId: product, accountToken: UUID(), environment: .xcode))
        #expect(await refusal { try await verifier(trusting: store).verifyTransaction(xcode) } == .wrongEnvironment)
        // Listing Xcode next to Production does not let it in; a development server may accept it alone.
        #expect(await refusal { try await verifier(trusting: store, environments: [.production, .xcode]).verifyTransaction(xcode) } == .wrongEnvironment)
        #expect(await refusal { try await verifier(trusting: store, environments: [.xcode]).verifyTransaction(xcode) } == nil)

        let sandbox = try store.sign(store.transaction(bundleId: bundle, productId: product, accountToken: UUID(), environment: .sandbox))
        #expect(await refusal { try await verifier(trusting: store, environments: [.production]).verifyTransaction(sandbox) } == .wrongEnvironment)
    }

    @Test("signed longer ago than the maximum age, or in the future, is refused; the chain is judged at signedDate")
    func age() async throws {
        let store = try TestAppStore()
        let now = ManualTime(Date())
        let check = try verifier(trusting: store, maximumAge: 86_400, clock: .manual(now))
        let jws = try store.sign(store.transaction(bundleId: bundle, productId: product, accountToken: UUID()))
        #expect(await refusal { try await check.verifyTransaction(jws) } == nil)
        now.advance(by: 86_400 + 1)
        #expect(await refusal { try await check.verifyTransaction(jws) } == .tooOld)
        now.advance(by: -3 * 86_400)
        #expect(await refusal { try await check.verifyTransaction(jws) } == .notYetValid)

        // Signed while the leaf was valid; verified after it expired: accepted (Apple's leaves rotate).
        var shortLived = TestAppStore.Options()
        shortLived.leafValidity = -86_400 ... 3600
        let rotating = try TestAppStore(options: shortLived)
        let later = ManualTime(Date() + 7200)
        let old = try rotating.sign(rotating.transaction(bundleId: bundle, productId: product, accountToken: UUID()))
        #expect(await refusal { try await verifier(trusting: rotating, clock: .manual(later)).verifyTransaction(old) } == nil)
    }

    @Test("a V2 notification verifies with the transaction inside it; one for another bundle is refused")
    func notifications() async throws {
        let store = try TestAppStore()
        let transaction = store.transaction(bundleId: bundle, productId: product, accountToken: UUID(), revokedAt: Date())
        let inner = try store.sign(transaction)
        let notification = SignedNotification(
            notificationType: "REFUND", notificationUUID: UUID().uuidString.lowercased(),
            data: .init(appAppleId: 1234, bundleId: bundle, environment: .sandbox, signedTransactionInfo: inner),
            signedDate: Int64(Date().timeIntervalSince1970 * 1000))
        let (verified, innerVerified) = try await verifier(trusting: store).verifyNotification(try store.sign(notification))
        #expect(verified == notification)
        #expect(innerVerified == transaction)

        var foreign = notification
        foreign.data?.bundleId = "com.example.other"
        #expect(await refusal { try await verifier(trusting: store).verifyNotification(try store.sign(foreign)) } == .wrongBundle)

        // Production notifications must name this app's Apple ID when it is configured.
        var production = notification
        production.data?.environment = .production
        production.data?.signedTransactionInfo = try store.sign(store.transaction(bundleId: bundle, productId: product, accountToken: UUID(),
                                                                                   environment: .production))
        let named = try SignedDataVerifier(rootCertificates: [store.rootDER], bundleId: bundle, appAppleId: 1234,
                                           environments: [.production, .sandbox], maximumAge: 86_400)
        #expect(await refusal { try await named.verifyNotification(try store.sign(production)) } == nil)
        production.data?.appAppleId = 999
        #expect(await refusal { try await named.verifyNotification(try store.sign(production)) } == .wrongBundle)

        let test = SignedNotification(notificationType: "TEST", notificationUUID: UUID().uuidString, data: nil,
                                      signedDate: Int64(Date().timeIntervalSince1970 * 1000))
        let (plain, none) = try await verifier(trusting: store).verifyNotification(try store.sign(test))
        #expect(plain.notificationType == "TEST" && none == nil)
    }
}

extension Data {
    init(base64URL text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self = Data(base64Encoded: base64) ?? Data()
    }

    var base64URL: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// Any JSON object, encoded as it is (to sign payloads a `Codable` type could not hold).
private struct RawJSON: Encodable {
    let object: [String: Any]
    init(_ object: [String: Any]) { self.object = object }
    func encode(to encoder: any Encoder) throws {
        let data = try JSONSerialization.data(withJSONObject: object)
        let value = try JSONDecoder().decode(JSONValue.self, from: data)
        try value.encode(to: encoder)
    }
}
