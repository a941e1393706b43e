import AsyncHTTPClient
import Foundation
import LanternCore
import NIOCore
import NIOFoundationCompat

/// Apple Push Notification service over HTTP/2 with token authentication.
///
/// `POST /3/device/<token>` with the provider JWT as bearer; async-http-client negotiates HTTP/2 by ALPN and
/// multiplexes every request on one connection. Reference: "Sending notification requests to APNs" and
/// "Handling notification responses from APNs" (developer.apple.com).
public struct APNsProvider: PushProvider {
    public let name = "apns"
    /// APNs refuses larger payloads (`PayloadTooLarge`).
    public static let maxPayloadBytes = 4096

    let baseURL: URL
    let topics: [String: String]
    let signer: APNsTokenSigner
    let httpClient: HTTPClient
    let timeout: Duration

    public init(baseURL: URL, topics: [String: String], signer: APNsTokenSigner, httpClient: HTTPClient, timeout: Duration) {
        self.baseURL = baseURL
        self.topics = topics
        self.signer = signer
        self.httpClient = httpClient
        self.timeout = timeout
    }

    struct ErrorBody: Decodable { var reason: String }

    public func send(_ notification: RenderedNotification, to device: Device) async -> DeliveryResult {
        // The token goes into the path: anything but hex is not a device token.
        guard !device.pushToken.isEmpty, device.pushToken.count <= 200, device.pushToken.allSatisfy(\.isHexDigit) else {
            return .invalidToken(reason: "BadDeviceToken (not hexadecimal)")
        }
        guard let topic = topics[device.app.rawValue] else { return .failed(reason: "no APNs topic for app \(device.app)") }
        let payload: Data
        do { payload = try Self.payload(notification) } catch { return .failed(reason: "\(error)") }

        for attempt in 0..<2 {
            let token: String
            do { token = try await signer.token() } catch { return .failed(reason: "cannot sign the provider token: \(error)") }
            var request = HTTPClientRequest(url: baseURL.absoluteString + "/3/device/" + device.pushToken.lowercased())
            request.method = .POST
            request.headers.add(name: "authorization", value: "bearer \(token)")
            request.headers.add(name: "apns-topic", value: topic)
            request.headers.add(name: "apns-push-type", value: notification.delivery == .alert ? "alert" : "background")
            // Background pushes must use priority 5; alerts go out at once.
            request.headers.add(name: "apns-priority", value: notification.delivery == .alert ? "10" : "5")
            request.headers.add(name: "apns-expiration", value: String(Int(notification.expiresAt.timeIntervalSince1970)))
            request.headers.add(name: "apns-id", value: notification.id.uuidString)
            if var collapse = notification.collapseKey {
                while collapse.utf8.count > 64 { collapse.removeLast() }  // APNs' limit
                request.headers.add(name: "apns-collapse-id", value: collapse)
            }
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: payload))

            let response: HTTPClientResponse
            let body: ByteBuffer
            do {
                (response, body) = try await httpClient.exchange(request, timeout: timeout)
            } catch {
                return .retry(after: nil, reason: "APNs unreachable: \(error)")
            }
            if response.status == .ok { return .delivered }
            let reason = (try? JSONDecoder().decode(ErrorBody.self, from: body))?.reason ?? "HTTP \(response.status.code)"
            if response.status.code == 403, reason == "ExpiredProviderToken", attempt == 0 {
                await signer.invalidate(token)
                continue
            }
            return Self.classify(status: Int(response.status.code), reason: reason, retryAfter: response.headers.first(name: "retry-after"))
        }
        return .retry(after: nil, reason: "ExpiredProviderToken twice")
    }

    static func classify(status: Int, reason: String, retryAfter header: String?) -> DeliveryResult {
        switch (status, reason) {
        case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"):
            return .invalidToken(reason: reason)
        case (429, _), (500...599, _):
            return .retry(after: RetryAfter.parse(header), reason: reason)
        default:
            return .failed(reason: "APNs \(status) \(reason)")
        }
    }

    /// The JSON payload: `aps` plus the app's keys (`kind` and the request's data). An alert whose body would
    /// push it past 4 KB gets a shortened body; anything else that large is refused.
    static func payload(_ n: RenderedNotification) throws -> Data {
        func encode(body: String?) throws -> Data {
            var root: [String: JSONValue] = n.data.mapValues { .string($0) }
            root["kind"] = .string(n.kind)
            switch n.delivery {
            case .alert:
                var alert: [String: JSONValue] = [:]
                if let title = n.title { alert["title"] = .string(title) }
                if let body { alert["body"] = .string(body) }
                root["aps"] = .object(["alert": .object(alert), "sound": .string("default")])
            case .background:
                root["aps"] = .object(["content-available": .number(1)])
            }
            return try JSONEncoder.lantern.encode(JSONValue.object(root))
        }
        var body = n.body
        var data = try encode(body: body)
        while data.count > maxPayloadBytes {
            // Only an alert's body may give way, and only while it keeps getting shorter.
            guard n.delivery == .alert, let current = body, current.count > 8 else { throw PayloadTooLarge(bytes: data.count) }
            body = String(current.prefix(current.count * 3 / 4 - 1)) + "…"
            data = try encode(body: body)
        }
        return data
    }

    struct PayloadTooLarge: Error, CustomStringConvertible {
        var bytes: Int
        var description: String { "payload of \(bytes) bytes exceeds APNs' \(APNsProvider.maxPayloadBytes)" }
    }
}
