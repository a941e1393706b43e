import AsyncHTTPClient
import Foundation
import LanternCore
import NIOCore
import NIOFoundationCompat

/// Firebase Cloud Messaging, HTTP v1 API: `POST /v1/projects/<project>/messages:send` with an OAuth 2.0 bearer
/// token of the service account. Errors carry an `FcmError` detail whose `errorCode` decides what happens.
public struct FCMProvider: PushProvider {
    public let name = "fcm"
    let baseURL: URL
    let projectID: String
    let tokens: GoogleAccessTokens
    let httpClient: HTTPClient
    let timeout: Duration

    public init(baseURL: URL, projectID: String, tokens: GoogleAccessTokens, httpClient: HTTPClient, timeout: Duration) {
        self.baseURL = baseURL
        self.projectID = projectID
        self.tokens = tokens
        self.httpClient = httpClient
        self.timeout = timeout
    }

    struct ErrorBody: Decodable {
        struct Status: Decodable {
            struct Detail: Decodable {
                var type: String?
                var errorCode: String?
                enum CodingKeys: String, CodingKey { case type = "@type", errorCode }
            }
            var code: Int?
            var message: String?
            var status: String?
            var details: [Detail]?
        }
        var error: Status
    }

    public func send(_ notification: RenderedNotification, to device: Device) async -> DeliveryResult {
        let body: Data
        do { body = try JSONEncoder.lantern.encode(Self.message(notification, token: device.pushToken)) } catch { return .failed(reason: "\(error)") }
        for attempt in 0..<2 {
            let token: String
            do { token = try await tokens.token() } catch { return .retry(after: nil, reason: "no FCM access token: \(error)") }
            var request = HTTPClientRequest(url: baseURL.absoluteString + "/v1/projects/\(projectID)/messages:send")
            request.method = .POST
            request.headers.add(name: "authorization", value: "Bearer \(token)")
            request.headers.add(name: "content-type", value: "application/json; charset=utf-8")
            request.body = .bytes(ByteBuffer(data: body))
            let response: HTTPClientResponse
            let answer: ByteBuffer
            do {
                (response, answer) = try await httpClient.exchange(request, timeout: timeout)
            } catch {
                return .retry(after: nil, reason: "FCM unreachable: \(error)")
            }
            if response.status == .ok { return .delivered }
            let error = (try? JSONDecoder().decode(ErrorBody.self, from: answer))?.error
            let code = error?.details?.compactMap(\.errorCode).first ?? error?.status ?? "HTTP \(response.status.code)"
            if response.status.code == 401, code != "THIRD_PARTY_AUTH_ERROR", attempt == 0 {
                await tokens.invalidate(token)  // expired or revoked access token: exchange a new one once
                continue
            }
            return Self.classify(status: Int(response.status.code), code: code, message: error?.message,
                                 retryAfter: response.headers.first(name: "retry-after"))
        }
        return .failed(reason: "FCM rejected a fresh access token (401)")
    }

    static func classify(status: Int, code: String, message: String?, retryAfter header: String?) -> DeliveryResult {
        switch code {
        case "UNREGISTERED", "SENDER_ID_MISMATCH":
            return .invalidToken(reason: code)
        case "QUOTA_EXCEEDED", "UNAVAILABLE", "INTERNAL":
            return .retry(after: RetryAfter.parse(header), reason: code)
        default:
            if status == 429 || status >= 500 { return .retry(after: RetryAfter.parse(header), reason: code) }
            return .failed(reason: "FCM \(status) \(code)\(message.map { ": \($0)" } ?? "")")
        }
    }

    /// The v1 `Message`: a notification message for alerts, a data-only message (high priority, so it wakes the
    /// app) for background pushes. Data values are strings, as FCM requires.
    static func message(_ n: RenderedNotification, token: String) -> JSONValue {
        var data: [String: JSONValue] = n.data.mapValues { .string($0) }
        data["kind"] = .string(n.kind)
        var android: [String: JSONValue] = ["priority": .string("high"), "ttl": .string("\(max(0, n.ttlSeconds))s")]
        if let collapse = n.collapseKey { android["collapse_key"] = .string(collapse) }
        var message: [String: JSONValue] = ["token": .string(token), "data": .object(data)]
        if n.delivery == .alert {
            var notification: [String: JSONValue] = [:]
            if let title = n.title { notification["title"] = .string(title) }
            if let body = n.body { notification["body"] = .string(body) }
            message["notification"] = .object(notification)
            if let collapse = n.collapseKey { android["notification"] = .object(["tag": .string(collapse)]) }
        }
        message["android"] = .object(android)
        return .object(["message": .object(message)])
    }
}
