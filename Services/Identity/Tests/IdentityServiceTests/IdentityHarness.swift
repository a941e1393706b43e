import Foundation
import Hummingbird
import HummingbirdTesting
import IdentityService
import LanternContracts
import LanternCore
import LanternEvents
import LanternRedis
import LanternTestSupport
import NIOCore
import NIOFoundationCompat
import Testing

/// A running identity service on its own database and stream prefix, driven through Hummingbird's test client.
struct IdentityHarness {
    let client: any TestClientProtocol
    let streams: StreamNames
    let redis: RedisClient
    let time: ManualTime
    let databaseURL: String

    /// Starts identity with a manual clock; `google`/`apple` are key-set URLs of fake providers.
    /// With `proxy`, identity reaches its database through it (to take the database away mid-test).
    static func run(google: URL? = nil, apple: URL? = nil, extra: [String: String] = [:], proxy: DatabaseProxy? = nil,
                    _ body: @Sendable (IdentityHarness) async throws -> Void) async throws {
        try await TestEnvironment.withDatabase { url in
            let prefix = TestEnvironment.uniquePrefix()
            var variables = ["OPS_PORT": "0", "DATABASE_URL": proxy?.url(for: url) ?? url, "REDIS_URL": try await TestEnvironment.redisURL(for: "identity", prefix: prefix), "STREAM_PREFIX": prefix, "LOG_LEVEL": "warning"]
            // Fake providers' key sets are only allowed in development (IdentityConfiguration).
            if google != nil || apple != nil { variables["LANTERN_ENVIRONMENT"] = "development" }
            if let google { variables["GOOGLE_JWKS_URL"] = google.absoluteString; variables["GOOGLE_CLIENT_IDS"] = "pairly-ios.apps.googleusercontent.com,pairly-android" }
            if let apple { variables["APPLE_JWKS_URL"] = apple.absoluteString; variables["APPLE_CLIENT_IDS"] = "com.lantern.pairly" }
            variables.merge(extra) { $1 }
            let configuration = try IdentityConfiguration(settings: .fixed(variables))
            let time = ManualTime(Date())
            let app = try await buildIdentityApplication(configuration, dependencies: .init(clock: .manual(time)), logger: TestEnvironment.logger)
            let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
            try await app.test(.router) { client in
                try await body(IdentityHarness(client: client, streams: StreamNames(prefix: prefix), redis: redis, time: time, databaseURL: url))
            }
            await redis.shutdown()
        }
    }

    // MARK: Requests

    @discardableResult
    func request(_ method: HTTPRequest.Method, _ uri: String, token: String? = nil, json: String? = nil,
                 headers: HTTPFields = [:]) async throws -> TestResponse {
        var headers = headers
        if let token { headers[.authorization] = "Bearer \(token)" }
        if json != nil, headers[.contentType] == nil { headers[.contentType] = "application/json" }
        return try await client.execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
    }

    func signInDevice(_ deviceId: String = UUID().uuidString, app: String = "luckyday") async throws -> Tokens {
        let response = try await request(.post, "/v1/auth/device", json: #"{"deviceId":"\#(deviceId)","app":"\#(app)"}"#)
        #expect([.ok, .created].contains(response.status), "\(String(buffer: response.body))")
        return try response.json(Tokens.self)
    }

    /// New tokens for the same session (after moving the clock past the access token's life).
    func refreshed(_ tokens: Tokens) async throws -> Tokens {
        let response = try await request(.post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(tokens.refreshToken)"}"#)
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return try response.json(Tokens.self)
    }

    /// Events of identity's stream so far, oldest first.
    func events() async throws -> [EventEnvelope] {
        let reply = try await redis.send(["XRANGE", streams.events("identity"), "-", "+"])
        return (reply.array ?? []).compactMap { $0.array?[1].array?[1].string }.compactMap { try? EventEnvelope.decode($0) }
    }

    /// `realtime.disconnect` events on `lantern.realtime` so far, oldest first.
    func disconnects() async throws -> [RealtimeDisconnect] {
        let reply = try await redis.send(["XRANGE", streams.realtime, "-", "+"])
        return (reply.array ?? []).compactMap { $0.array?[1].array?[1].string }.compactMap { try? EventEnvelope.decode($0) }
            .filter { $0.type == RealtimeDisconnect.eventType }.compactMap { try? $0.payload(as: RealtimeDisconnect.self) }
    }

    /// Push jobs queued so far (`lantern.jobs.push`), oldest first.
    func pushJobs() async throws -> [PushRequest] {
        let reply = try await redis.send(["XRANGE", streams.jobs("push"), "-", "+"])
        return (reply.array ?? []).compactMap { $0.array?[1].array?[1].string }.compactMap { try? EventEnvelope.decode($0).payload(as: PushRequest.self) }
    }

    /// Waits for an event of `type` about `subject`.
    func event(_ type: String, subject: String) async throws -> EventEnvelope? {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let found = try await events().first(where: { $0.type == type && $0.subject == subject }) { return found }
            try await Task.sleep(for: .milliseconds(25))
        }
        return nil
    }
}

struct Tokens: Decodable {
    var accessToken: String
    var refreshToken: String
    var expiresIn: Int
    var tokenType: String
    var isNewUser: Bool?
    var user: UserBody?
}

struct UserBody: Decodable, Equatable {
    var id: String
    var app: String
    var displayName: String?
    var email: String?
    var timeZone: String?
    var locale: String?
    var signInMethods: [String]
}

struct ProblemBody: Decodable {
    var status: Int
    var code: String
    var title: String
    var type: String
    var detail: String?
    var errors: [Field]?
    struct Field: Decodable { var field: String; var message: String }
}

extension TestResponse {
    func json<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(buffer: body))
    }

    /// Asserts an RFC 9457 problem with this status and code (and field, for validation problems).
    func expectProblem(_ status: Int, _ code: String, field: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(self.status.code == status, "\(String(buffer: body))", sourceLocation: sourceLocation)
        #expect(headers[.contentType] == "application/problem+json", sourceLocation: sourceLocation)
        guard let problem = try? json(ProblemBody.self) else {
            Issue.record("not a problem body: \(String(buffer: body))", sourceLocation: sourceLocation)
            return
        }
        #expect(problem.code == code, "\(problem)", sourceLocation: sourceLocation)
        #expect(problem.status == status, sourceLocation: sourceLocation)
        if let field {
            #expect(problem.errors?.contains { $0.field == field } == true, "\(problem)", sourceLocation: sourceLocation)
        }
    }
}
