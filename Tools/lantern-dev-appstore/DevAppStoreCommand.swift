import ArgumentParser
import DevAppStore
import Foundation
import LanternAppStore

/// `lantern-dev-appstore`: the development stack's App Store signer (`DevAppStoreSigner`). `make up` makes it and
/// points content at its root; `make appstore-purchase` and `make demo` sign purchases and refunds with it, as Xcode's
/// StoreKit testing signs them on a developer's Mac. Nothing it signs is trusted outside development.
@main
struct DevAppStoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lantern-dev-appstore",
        abstract: "Signs made-up App Store purchases and notifications, for the development stack only.",
        subcommands: [Root.self, Purchase.self, Notification.self])

    struct Common: ParsableArguments {
        @Option(help: "the signer's folder (made on first use)") var folder: String
        var signer: DevAppStoreSigner { get throws { try DevAppStoreSigner(folder: URL(fileURLWithPath: folder)) } }
    }

    /// Prints the path of the root certificate (making the signer if needed): `APPSTORE_ROOT_CERTIFICATES`.
    struct Root: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "make the signer if needed; print its root certificate's path")
        @OptionGroup var common: Common

        func run() throws {
            _ = try common.signer
            print(DevAppStoreSigner.rootFile(in: URL(fileURLWithPath: common.folder)).path)
        }
    }

    /// A consumable's transaction, signed now, as StoreKit 2 hands it to the app: JSON with `transactionId`,
    /// `signedTransaction` (what the app posts) and the decoded `transaction`.
    struct Purchase: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "sign a purchase of a consumable, as StoreKit hands it to the app")
        @OptionGroup var common: Common
        @Option(help: "the product id, e.g. app.lantern.astrosvitla.report.career") var product: String
        @Option(help: "the app's bundle id") var bundle = "app.lantern.astrosvitla"
        @Option(help: "the appAccountToken the app set: the Lantern user id") var accountToken: String?
        @Option(help: "Xcode, LocalTesting or Sandbox") var environment = "Xcode"

        func run() throws {
            guard let environment = AppStoreEnvironment(rawValue: environment) else { throw ValidationError("unknown environment \(environment)") }
            let token = try accountToken.map { text in
                guard let uuid = UUID(uuidString: text) else { throw ValidationError("--account-token must be a UUID (the user id)") }
                return uuid
            }
            let signer = try common.signer
            let transaction = signer.transaction(bundleId: bundle, productId: product, accountToken: token, environment: environment)
            try printJSON(["transactionId": .string(transaction.transactionId), "signedTransaction": .string(try signer.sign(transaction))])
        }
    }

    /// An App Store Server Notification V2 about a purchase signed before (`REFUND` by default, with its
    /// `revocationDate`): JSON `{"signedPayload": …}`, the body the App Store posts to `/v1/appstore/notifications`.
    struct Notification: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "sign a notification (REFUND, REFUND_REVERSED…) about a purchase")
        @OptionGroup var common: Common
        @Option(help: "REFUND, REFUND_REVERSED, REVOKE or TEST") var type = "REFUND"
        @Option(help: "the purchase's signedTransaction, as `purchase` printed it") var transaction: String

        func run() throws {
            let parts = transaction.split(separator: ".")
            guard parts.count == 3, let payload = Data(base64URL: String(parts[1])),
                  var purchase = try? JSONDecoder().decode(SignedTransaction.self, from: payload) else {
                throw ValidationError("--transaction must be a signedTransaction printed by `purchase`")
            }
            let now = Date()
            if type == "REFUND" || type == "REVOKE" {
                purchase.revocationDate = Int64(now.timeIntervalSince1970 * 1000)
                purchase.revocationReason = 0
            }
            purchase.signedDate = Int64(now.timeIntervalSince1970 * 1000)
            let signer = try common.signer
            try printJSON(["signedPayload": .string(try signer.sign(try signer.notification(type, transaction: purchase, at: now)))])
        }
    }
}

enum JSONText: Encodable {
    case string(String)
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self { case .string(let text): try container.encode(text) }
    }
}

func printJSON(_ object: [String: JSONText]) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    print(String(decoding: try encoder.encode(object), as: UTF8.self))
}

extension Data {
    init?(base64URL text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
