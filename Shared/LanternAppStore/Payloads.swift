import Foundation
import JWTKit

/// Where a transaction or notification was signed: the App Store (`Production`), its sandbox, or a developer's
/// own machine (`Xcode`, `LocalTesting`: StoreKit testing signs with a local certificate).
public enum AppStoreEnvironment: String, Codable, Sendable, CaseIterable {
    case production = "Production"
    case sandbox = "Sandbox"
    case xcode = "Xcode"
    case localTesting = "LocalTesting"

    /// Signed on a developer's machine, never by Apple.
    public var isLocal: Bool { self == .xcode || self == .localTesting }
}

/// Anything Apple signs carries the time it was signed; chains are checked as of that time.
public protocol AppStoreSignedPayload: JWTPayload {
    /// Milliseconds since 1970.
    var signedDate: Int64 { get }
}

extension AppStoreSignedPayload {
    /// Nothing to check in the payload itself: `SignedDataVerifier` checks what the caller asked for.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// StoreKit 2's `Transaction.jwsRepresentation`, decoded (App Store Server API `JWSTransactionDecodedPayload`).
/// Dates are milliseconds since 1970, as Apple sends them.
public struct SignedTransaction: AppStoreSignedPayload, Equatable {
    public var transactionId: String
    public var originalTransactionId: String?
    public var bundleId: String
    public var productId: String
    /// `Consumable`, `Non-Consumable`, `Auto-Renewable Subscription`, `Non-Renewing Subscription`.
    public var type: String
    public var environment: AppStoreEnvironment
    public var purchaseDate: Int64
    public var signedDate: Int64
    /// The UUID the app passed as `appAccountToken` when it bought (Lantern: the account id), lower or upper case.
    public var appAccountToken: String?
    public var revocationDate: Int64?
    public var revocationReason: Int?
    public var quantity: Int?
    /// Price in milliunits of `currency` (e.g. 9990 = 9.99).
    public var price: Int64?
    public var currency: String?
    public var storefront: String?

    public init(transactionId: String, originalTransactionId: String? = nil, bundleId: String, productId: String,
                type: String, environment: AppStoreEnvironment, purchaseDate: Int64, signedDate: Int64,
                appAccountToken: String? = nil, revocationDate: Int64? = nil, revocationReason: Int? = nil,
                quantity: Int? = 1, price: Int64? = nil, currency: String? = nil, storefront: String? = nil) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId ?? transactionId
        self.bundleId = bundleId
        self.productId = productId
        self.type = type
        self.environment = environment
        self.purchaseDate = purchaseDate
        self.signedDate = signedDate
        self.appAccountToken = appAccountToken
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.quantity = quantity
        self.price = price
        self.currency = currency
        self.storefront = storefront
    }

    public static let consumable = "Consumable"
}

/// App Store Server Notifications V2: the body Apple posts is `{"signedPayload": "<JWS>"}`, and this is that JWS
/// decoded (`ResponseBodyV2DecodedPayload`). `data.signedTransactionInfo` is itself a signed transaction.
public struct SignedNotification: AppStoreSignedPayload, Equatable {
    public struct NotificationData: Codable, Sendable, Equatable {
        public var appAppleId: Int64?
        public var bundleId: String?
        public var bundleVersion: String?
        public var environment: AppStoreEnvironment?
        public var signedTransactionInfo: String?
        public var signedRenewalInfo: String?

        public init(appAppleId: Int64? = nil, bundleId: String?, bundleVersion: String? = nil, environment: AppStoreEnvironment?,
                    signedTransactionInfo: String?, signedRenewalInfo: String? = nil) {
            self.appAppleId = appAppleId
            self.bundleId = bundleId
            self.bundleVersion = bundleVersion
            self.environment = environment
            self.signedTransactionInfo = signedTransactionInfo
            self.signedRenewalInfo = signedRenewalInfo
        }
    }

    /// `REFUND`, `REVOKE`, `REFUND_REVERSED`, `CONSUMPTION_REQUEST`, `TEST`, …
    public var notificationType: String
    public var subtype: String?
    /// Unique per notification; Apple retries with the same one.
    public var notificationUUID: String
    public var data: NotificationData?
    public var version: String?
    public var signedDate: Int64

    public init(notificationType: String, subtype: String? = nil, notificationUUID: String, data: NotificationData?,
                version: String? = "2.0", signedDate: Int64) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.data = data
        self.version = version
        self.signedDate = signedDate
    }
}
