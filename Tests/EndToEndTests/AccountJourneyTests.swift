import AsyncHTTPClient
import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import LanternRedis
import LanternTestSupport
import NIOCore
import NIOFoundationCompat
import Synchronization
import Testing

struct TokenReply: Decodable {
    var accessToken: String
    var refreshToken: String
    var user: UserReply?
}

struct UserReply: Decodable {
    var id: String
    var displayName: String?
}

extension EndToEnd.Shared {
@Suite("End to end through the gateway", .serialized)
struct AccountJourneyTests {
    @Test("device sign-in, /v1/me, rename, refresh rotation and reuse detection, account deletion seen on the bus")
    func accountJourney() async throws {
        try await Stack.shared { stack in
            // A deployment's clock is the machine's: time travel is refused outside development.
            var travel = HTTPClientRequest(url: stack.operations["gateway", default: ""] + "/development/clock")
            travel.method = .POST
            travel.headers.add(name: "Content-Type", value: "application/json")
            travel.body = .bytes(ByteBuffer(string: #"{"days":1}"#))
            let refused = try await stack.http.execute(travel, timeout: .seconds(10))
            let refusal = String(buffer: try await refused.body.collect(upTo: 1 << 16))
            #expect(refused.status == .forbidden && refusal.contains("development_only"), "\(refused.status) \(refusal)")
            // A consumer group of "another service", listening the way a real one would.
            let deleted = Mutex<[EventEnvelope]>([])
            var options = StreamConsumer.Options(stream: stack.streams.events("identity"), group: "e2e-observer", consumer: "1")
            options.block = .milliseconds(200)
            let observer = StreamConsumer(endpoint: TestEnvironment.redisEndpoint, streams: stack.streams, options: options, logger: TestEnvironment.logger) { event in
                if event.type == "user.deleted" { deleted.withLock { $0.append(event) } }
            }
            try await withService(observer) {
                let deviceID = UUID().uuidString
                let signIn = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(deviceID)","app":"astrosvitla"}"#)
                #expect(signIn.status == 201, "\(signIn.text)")
                let tokens = try signIn.json(TokenReply.self)
                let userID = try #require(tokens.user?.id)

                let me = try await stack.call(.GET, "/v1/me", token: tokens.accessToken)
                #expect(me.status == 200)
                #expect(try me.json(UserReply.self).id == userID)
                #expect(me.headers.first(name: "X-Request-Id") != nil)

                let renamed = try await stack.call(.PATCH, "/v1/me", token: tokens.accessToken, json: #"{"displayName":"Зоряна"}"#)
                #expect(renamed.status == 200)
                #expect(try renamed.json(UserReply.self).displayName == "Зоряна")

                // Reinstall: the same device id finds the same account.
                let again = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(deviceID)","app":"astrosvitla"}"#)
                #expect(again.status == 200)
                #expect(try again.json(TokenReply.self).user?.id == userID)

                let refreshed = try await stack.call(.POST, "/v1/auth/refresh", json: #"{"refreshToken":"\#(tokens.refreshToken)"}"#)
                #expect(refreshed.status == 200)
                let next = try refreshed.json(TokenReply.self)
                #expect(next.refreshToken != tokens.refreshToken)
                let reused = try await stack.call(.POST, "/v1/auth/refresh", json: #"{"refreshToken":"\#(tokens.refreshToken)"}"#)
                #expect(reused.status == 401 && reused.problemCode == "refresh_token_reused")
                let afterReuse = try await stack.call(.POST, "/v1/auth/refresh", json: #"{"refreshToken":"\#(next.refreshToken)"}"#)
                #expect(afterReuse.status == 401 && afterReuse.problemCode == "session_revoked")

                let gone = try await stack.call(.DELETE, "/v1/me", token: next.accessToken)
                #expect(gone.status == 204)
                let seen = try await eventually { deleted.withLock { $0.contains { $0.subject == userID } } }
                #expect(seen)
                let event = deleted.withLock { $0.first { $0.subject == userID } }
                #expect(event?.producer == "identity" && event?.data["userId"]?.stringValue == userID)
            }
        }
    }

    @Test("bad input through the gateway: the right 4xx problem, never a 500")
    func badInput() async throws {
        try await Stack.shared { stack in
            let cases: [(String, String, String?, String, Int, String)] = [
                ("POST", "/v1/auth/device", #"{"deviceId":"#, "application/json", 400, "malformed_json"),
                ("POST", "/v1/auth/device", #"{"deviceId":1,"app":"luckyday"}"#, "application/json", 422, "validation_failed"),
                ("POST", "/v1/auth/device", #"{}"#, "application/json", 422, "validation_failed"),
                ("POST", "/v1/auth/device", "deviceId=1", "text/plain", 415, "unsupported_media_type"),
                ("POST", "/v1/auth/device", String(repeating: "a", count: 2_000_000), "application/json", 413, "payload_too_large"),
                ("POST", "/v1/auth/refresh", #"{"refreshToken":"nope"}"#, "application/json", 401, "invalid_refresh_token"),
                ("GET", "/v1/me", nil, "application/json", 401, "missing_token"),
                ("GET", "/v1/nothing-here", nil, "application/json", 404, "route_not_found"),
                ("GET", "/internal/users", nil, "application/json", 404, "route_not_found"),
            ]
            for (method, path, body, type, status, code) in cases {
                let reply = try await stack.call(.init(rawValue: method), path, json: body, contentType: type)
                #expect(reply.status == status, "\(method) \(path): \(reply.text.prefix(200))")
                #expect(reply.problemCode == code, "\(method) \(path): \(reply.text.prefix(200))")
                #expect(reply.headers.first(name: "Content-Type") == "application/problem+json")
            }
            let garbageToken = try await stack.call(.GET, "/v1/me", token: "abc.def.ghi")
            #expect(garbageToken.status == 401)
        }
    }
}
}
