import Crypto
import CryptoExtras
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdHTTP2
import JWTKit
import Logging
import NIOCore
import NIOSSL
import Synchronization

/// Fake APNs, FCM v1 and Google OAuth endpoints on one loopback TLS server speaking HTTP/2 (ALPN `h2`, with
/// HTTP/1.1 as fallback, like Google's front ends).
///
/// They check what the real services check — method, path, headers, the provider JWT's ES256 signature and
/// claims, the OAuth assertion's RS256 signature and claims, the access token, payload size and shape — and
/// answer with the real error bodies (`{"reason": …}` for APNs, `google.rpc.Status` with an `FcmError` detail
/// for FCM). `script(token:_:)` makes a device token answer with chosen errors first.
public final class FakePushServices: Sendable {
    public struct Received: Sendable {
        public var path: String
        public var headers: [String: String]
        public var body: Data
        /// The request came on an HTTP/2 stream (its channel is a child of the connection).
        public var http2: Bool
        /// Identifies the TCP connection it came on.
        public var connection: ObjectIdentifier?
        public var receivedAt = Date()
        public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
    }

    public struct Reply: Sendable {
        public var status: HTTPResponse.Status
        public var body: String
        public var headers: [String: String]
        public init(status: HTTPResponse.Status, body: String, headers: [String: String] = [:]) {
            self.status = status
            self.body = body
            self.headers = headers
        }
        public static func apns(_ status: Int, _ reason: String, retryAfter: String? = nil) -> Reply {
            let body = status == 410 ? #"{"reason":"\#(reason)","timestamp":\#(Int(Date().timeIntervalSince1970 * 1000))}"# : #"{"reason":"\#(reason)"}"#
            return Reply(status: .init(code: status), body: body, headers: retryAfter.map { ["retry-after": $0] } ?? [:])
        }
        public static func fcm(_ status: Int, _ grpcStatus: String, errorCode: String, message: String = "error", retryAfter: String? = nil) -> Reply {
            let body = #"{"error":{"code":\#(status),"message":"\#(message)","status":"\#(grpcStatus)","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#(errorCode)"}]}}"#
            return Reply(status: .init(code: status), body: body, headers: retryAfter.map { ["retry-after": $0] } ?? [:])
        }
    }

    public let tls: TestTLS
    public let apnsKeyPEM: String
    public let apnsKeyID = "ABC123DEFG"
    public let teamID = "DEF123GHIJ"
    public let topics: Set<String>
    public let projectID = "lantern-test"
    public let clientEmail = "push@lantern-test.iam.gserviceaccount.com"
    let serviceAccountKeyPEM: String
    let apnsKeys: JWTKeyCollection
    let googleKeys: JWTKeyCollection

    private let state = Mutex(State())
    struct State {
        var apns: [Received] = []
        var fcm: [Received] = []
        var oauth: [Received] = []
        var scripts: [String: [Reply]] = [:]
        var accessTokens: Set<String> = []
        /// Verified provider tokens and their `iat`.
        var providerTokens: [String: Int] = [:]
        var rejectedAuth = 0
    }

    public init(topics: Set<String> = ["app.lantern.pairly"]) async throws {
        tls = try TestTLS.make()
        self.topics = topics
        let apnsKey = P256.Signing.PrivateKey()
        apnsKeyPEM = apnsKey.pemRepresentation
        apnsKeys = JWTKeyCollection()
        await apnsKeys.add(ecdsa: try ES256PublicKey(pem: apnsKey.publicKey.pemRepresentation), kid: JWKIdentifier(string: apnsKeyID))
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        serviceAccountKeyPEM = rsa.pemRepresentation
        googleKeys = JWTKeyCollection()
        await googleKeys.add(rsa: try Insecure.RSA.PublicKey(pem: rsa.publicKey.pemRepresentation), digestAlgorithm: .sha256, kid: JWKIdentifier(string: "sa-key-1"))
    }

    // MARK: What was received

    public var apnsRequests: [Received] { state.withLock { $0.apns } }
    public var fcmRequests: [Received] { state.withLock { $0.fcm } }
    public var oauthRequests: [Received] { state.withLock { $0.oauth } }
    /// Distinct provider JWTs seen (APNs wants one reused, not one per request).
    public var providerTokensSeen: Int { state.withLock { $0.providerTokens.count } }
    public var rejectedAuthentications: Int { state.withLock { $0.rejectedAuth } }

    /// The next requests for `token` (APNs device token or FCM registration token) get these replies, in order.
    public func script(token: String, _ replies: [Reply]) { state.withLock { $0.scripts[token, default: []] += replies } }
    /// Makes every access token issued so far invalid (as if revoked), so the next FCM call gets a 401.
    public func revokeAccessTokens() { state.withLock { $0.accessTokens.removeAll() } }

    /// The service account JSON the worker reads, pointing at this server's token endpoint.
    public func serviceAccountJSON(baseURL: URL) throws -> Data {
        try JSONSerialization.data(withJSONObject: [
            "type": "service_account", "project_id": projectID, "private_key_id": "sa-key-1", "private_key": serviceAccountKeyPEM,
            "client_email": clientEmail, "client_id": "1", "token_uri": baseURL.appendingPathComponent("token").absoluteString,
        ])
    }

    // MARK: Serving

    public struct Context: RequestContext {
        public var coreContext: CoreRequestContextStorage
        let http2: Bool
        let connection: ObjectIdentifier?
        public init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
            http2 = source.channel.parent != nil
            connection = source.channel.parent.map { ObjectIdentifier($0) }
        }
    }

    /// Serves on `https://127.0.0.1:<port>` while `body` runs.
    public func serve<T: Sendable>(_ body: @Sendable (URL) async throws -> T) async throws -> T {
        let router = Router(context: Context.self)
        router.post("/3/device/:token") { request, context in try await self.apns(request, context) }
        router.post("/v1/projects/:project/messages:send") { request, context in try await self.fcm(request, context) }
        router.post("/token") { request, context in try await self.oauth(request, context) }
        let (ports, port) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "fake-push")
        logger.logLevel = .warning
        let app = Application(router: router, server: try .http2Upgrade(tlsConfiguration: try tls.serverConfiguration()),
                              configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in port.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        return try await withService(app) {
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }
            return try await body(URL(string: "https://127.0.0.1:\(port)")!)
        }
    }

    // MARK: APNs

    struct ProviderClaims: JWTPayload {
        var iss: String
        var iat: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    func apns(_ request: Request, _ context: Context) async throws -> Response {
        var request = request
        let token = context.parameters.get("token") ?? ""
        let body = Data(buffer: try await request.collectBody(upTo: 1 << 20))
        let received = Received(path: request.uri.path, headers: Self.headers(request), body: body, http2: context.http2, connection: context.connection)
        state.withLock { $0.apns.append(received) }
        // Order of checks as APNs documents its errors.
        guard let auth = received.headers["authorization"], auth.hasPrefix("bearer ") else { return reply(.apns(403, "MissingProviderToken")) }
        let jwt = String(auth.dropFirst(7))
        // Like APNs, a token is verified once, then trusted until it is an hour old.
        var issuedAt = state.withLock { $0.providerTokens[jwt] }
        if issuedAt == nil {
            do {
                let header = try JWTParserHeader(jwt)
                guard header.alg == "ES256", header.kid == apnsKeyID else { return reply(.apns(403, "InvalidProviderToken")) }
                let claims = try await apnsKeys.verify(jwt, as: ProviderClaims.self)
                guard claims.iss == teamID else { return reply(.apns(403, "InvalidProviderToken")) }
                issuedAt = claims.iat
                state.withLock { $0.providerTokens[jwt] = claims.iat }
            } catch {
                state.withLock { $0.rejectedAuth += 1 }
                return reply(.apns(403, "InvalidProviderToken"))
            }
        }
        if Date().timeIntervalSince1970 - Double(issuedAt ?? 0) > 3600 { return reply(.apns(403, "ExpiredProviderToken")) }
        guard let topic = received.headers["apns-topic"] else { return reply(.apns(400, "MissingTopic")) }
        guard topics.contains(topic) else { return reply(.apns(400, "TopicDisallowed")) }
        guard let type = received.headers["apns-push-type"], ["alert", "background"].contains(type) else { return reply(.apns(400, "InvalidPushType")) }
        if type == "background", received.headers["apns-priority"] != "5" { return reply(.apns(400, "BadPriority")) }
        if let expiration = received.headers["apns-expiration"], Int(expiration) == nil { return reply(.apns(400, "BadExpirationDate")) }
        if let collapse = received.headers["apns-collapse-id"], collapse.utf8.count > 64 { return reply(.apns(400, "BadCollapseId")) }
        guard token.count == 64, token.allSatisfy(\.isHexDigit) else { return reply(.apns(400, "BadDeviceToken")) }
        if body.count > 4096 { return reply(.apns(413, "PayloadTooLarge")) }
        guard let json = received.json, let aps = json["aps"] as? [String: Any] else { return reply(.apns(400, "PayloadEmpty")) }
        if type == "background", aps["content-available"] as? Int != 1 { return reply(.apns(400, "BadPayload")) }
        if let scripted = nextScripted(token) { return reply(scripted) }
        return Response(status: .ok, headers: [HTTPField.Name("apns-id")!: received.headers["apns-id"] ?? UUID().uuidString])
    }

    // MARK: FCM

    func fcm(_ request: Request, _ context: Context) async throws -> Response {
        var request = request
        let body = Data(buffer: try await request.collectBody(upTo: 1 << 20))
        let received = Received(path: request.uri.path, headers: Self.headers(request), body: body, http2: context.http2, connection: context.connection)
        state.withLock { $0.fcm.append(received) }
        guard let auth = received.headers["authorization"], auth.hasPrefix("Bearer "),
              state.withLock({ $0.accessTokens.contains(String(auth.dropFirst(7))) }) else {
            state.withLock { $0.rejectedAuth += 1 }
            return reply(Reply(status: .unauthorized, body: #"{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}"#))
        }
        guard context.parameters.get("project") == projectID else {
            return reply(.fcm(403, "PERMISSION_DENIED", errorCode: "SENDER_ID_MISMATCH", message: "SenderId mismatch"))
        }
        guard let message = received.json?["message"] as? [String: Any], let token = message["token"] as? String, !token.isEmpty else {
            return reply(.fcm(400, "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT", message: "The registration token is not a valid FCM registration token"))
        }
        if let data = message["data"] {
            guard let strings = data as? [String: Any], strings.values.allSatisfy({ $0 is String }) else {
                return reply(.fcm(400, "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT", message: "Invalid value at 'message.data'"))
            }
        }
        if let android = message["android"] as? [String: Any], let ttl = android["ttl"] as? String, !ttl.hasSuffix("s") {
            return reply(.fcm(400, "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT", message: "Invalid value at 'message.android.ttl'"))
        }
        if let scripted = nextScripted(token) { return reply(scripted) }
        return reply(Reply(status: .ok, body: #"{"name":"projects/\#(projectID)/messages/0:\#(UInt64.random(in: 1...UInt64.max))"}"#))
    }

    // MARK: OAuth (RFC 7523 JWT bearer grant)

    struct Assertion: JWTPayload {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int
        var exp: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    func oauth(_ request: Request, _ context: Context) async throws -> Response {
        var request = request
        let body = Data(buffer: try await request.collectBody(upTo: 1 << 16))
        let received = Received(path: request.uri.path, headers: Self.headers(request), body: body, http2: context.http2, connection: context.connection)
        state.withLock { $0.oauth.append(received) }
        let invalid = { (why: String) in self.reply(Reply(status: .badRequest, body: #"{"error":"invalid_grant","error_description":"\#(why)"}"#)) }
        guard received.headers["content-type"]?.hasPrefix("application/x-www-form-urlencoded") == true else { return invalid("Bad Request") }
        var form: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
            if parts.count == 2 { form[parts[0]] = parts[1] }
        }
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer", let assertion = form["assertion"] else { return invalid("Invalid grant_type") }
        do {
            let claims = try await googleKeys.verify(assertion, as: Assertion.self)
            let now = Int(Date().timeIntervalSince1970)
            guard claims.iss == clientEmail, claims.scope.split(separator: " ").contains("https://www.googleapis.com/auth/firebase.messaging"),
                  claims.aud.hasSuffix("/token"), claims.exp - claims.iat <= 3600, claims.exp > now, claims.iat <= now + 60 else {
                return invalid("Invalid JWT: claims")
            }
        } catch {
            state.withLock { $0.rejectedAuth += 1 }
            return invalid("Invalid JWT Signature.")
        }
        let token = "ya29.fake-" + UUID().uuidString
        state.withLock { _ = $0.accessTokens.insert(token) }
        return reply(Reply(status: .ok, body: #"{"access_token":"\#(token)","expires_in":3599,"token_type":"Bearer"}"#))
    }

    // MARK: Helpers

    private func nextScripted(_ token: String) -> Reply? {
        state.withLock { state in
            guard var queue = state.scripts[token], !queue.isEmpty else { return nil }
            let next = queue.removeFirst()
            state.scripts[token] = queue
            return next
        }
    }

    private func reply(_ reply: Reply) -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        for (name, value) in reply.headers { if let name = HTTPField.Name(name) { headers[name] = value } }
        return Response(status: reply.status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: reply.body)))
    }

    static func headers(_ request: Request) -> [String: String] {
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        return headers
    }
}

/// The JOSE header of a compact JWT, read without verifying (to check `alg` and `kid` first, as a server does).
struct JWTParserHeader {
    var alg: String?
    var kid: String?
    init(_ jwt: String) throws {
        guard let part = jwt.split(separator: ".").first else { throw JWTError.malformedToken(reason: "no header") }
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64),
              let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw JWTError.malformedToken(reason: "header") }
        alg = object["alg"] as? String
        kid = object["kid"] as? String
    }
}
