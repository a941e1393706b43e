import AsyncHTTPClient
import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import Logging
import NIOCore

/// A push registration as the worker's registry holds it.
public struct Device: Sendable, Equatable {
    public enum Platform: String, Sendable { case ios, android }
    public var userID: UUID
    public var deviceID: String
    public var app: AppID
    public var platform: Platform
    public var pushToken: String
    public var locale: String?

    public init(userID: UUID, deviceID: String, app: AppID, platform: Platform, pushToken: String, locale: String?) {
        self.userID = userID
        self.deviceID = deviceID
        self.app = app
        self.platform = platform
        self.pushToken = pushToken
        self.locale = locale
    }
}

/// One notification for one device, already in the device's language.
public struct RenderedNotification: Sendable, Equatable {
    public var id: UUID
    public var kind: String
    public var delivery: PushRequest.Delivery
    public var title: String?
    public var body: String?
    public var collapseKey: String?
    /// How long the provider keeps trying to reach an offline device (FCM `ttl`)…
    public var ttlSeconds: Int
    /// …and the same as a moment (`apns-expiration`).
    public var expiresAt: Date
    public var data: [String: String]
}

/// What a provider's answer means for the registration and the notification.
public enum DeliveryResult: Sendable, Equatable {
    case delivered
    /// The token is dead (app removed, token rotated): delete the registration.
    case invalidToken(reason: String)
    /// Try again later (429, 5xx, network); `after` is the provider's `Retry-After` when it sent one.
    case retry(after: Duration?, reason: String)
    /// Retrying cannot help (bad payload, credentials rejected): dead-letter it.
    case failed(reason: String)
}

/// A way to deliver to one platform: APNs, FCM, or the log.
public protocol PushProvider: Sendable {
    var name: String { get }
    func send(_ notification: RenderedNotification, to device: Device) async -> DeliveryResult
}

/// The default when a platform has no credentials: writes the notification to the log and calls it delivered,
/// so the stack runs without Apple or Google accounts. Tokens are shortened; they are credentials of a sort.
public struct LogPushProvider: PushProvider {
    public let name = "log"
    let logger: Logger
    public init(logger: Logger) { self.logger = logger }

    public func send(_ notification: RenderedNotification, to device: Device) async -> DeliveryResult {
        logger.info("push (log provider)", metadata: [
            "platform": "\(device.platform.rawValue)", "device": "\(device.deviceID)", "token": "\(device.pushToken.prefix(8))…",
            "kind": "\(notification.kind)", "delivery": "\(notification.delivery.rawValue)",
            "title": "\(notification.title ?? "")", "body": "\(notification.body ?? "")",
        ])
        return .delivered
    }
}

extension HTTPClient {
    /// One provider request with its (small JSON) answer read whole.
    func exchange(_ request: HTTPClientRequest, timeout: Duration) async throws -> (HTTPClientResponse, ByteBuffer) {
        let response = try await execute(request, timeout: timeout.timeAmount)
        return (response, try await response.body.collect(upTo: 64 * 1024))
    }
}

extension Duration {
    var timeAmount: TimeAmount {
        .nanoseconds(components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000)
    }
}

