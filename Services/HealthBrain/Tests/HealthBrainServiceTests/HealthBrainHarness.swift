import Foundation
import HealthBrainService
import Hummingbird
import HummingbirdTesting
import LanternContracts
import LanternCore
import LanternEvents
import LanternRedis
import LanternTestSupport
import NIOCore
import PostgresNIO
import Testing

/// health-brain on its own database and stream prefix, with a fake identity issuing tokens, fake model servers and
/// one manual clock for all. The brain's model is `model` on the fake Gemini when given, else the local brain.
struct HealthBrainHarness {
    let client: any TestClientProtocol
    let identity: FakeIdentity
    let models: FakeLLMServers
    let streams: StreamNames
    let redis: RedisClient
    let databaseURL: String
    let time: ManualTime
    let variables: [String: String]

    static let model = "gemini-test-brain"

    /// - Parameters:
    ///   - model: route the brain to the fake Gemini's `model` (else no model: the local brain).
    ///   - extra: more variables (`BRAIN_TIMEOUT_SECONDS`…).
    static func run(start: Date = Date(timeIntervalSince1970: 1_795_000_000), model: Bool = false, extra: [String: String] = [:],
                    _ body: @Sendable (HealthBrainHarness) async throws -> Void) async throws {
        let time = ManualTime(start)
        let identity = try await FakeIdentity(clock: .manual(time))
        let models = FakeLLMServers()
        try await identity.serve { identityURL in
            try await models.run { geminiURL, _ in
                try await TestEnvironment.withDatabase { url in
                    let prefix = TestEnvironment.uniquePrefix()
                    // Symbi's pictures, as evolution-worker would store them.
                    let pictures = FileManager.default.temporaryDirectory.appendingPathComponent("lantern-symbi-\(prefix)")
                    defer { try? FileManager.default.removeItem(at: pictures) }
                    var variables = ["OPS_PORT": "0", "DATABASE_URL": url, "REDIS_URL": try await TestEnvironment.redisURL(for: "health-brain", prefix: prefix), "STREAM_PREFIX": prefix,
                                     "SYMBI_STORAGE_DIR": pictures.path,
                                     "LOG_LEVEL": "warning", "IDENTITY_URL": identityURL.absoluteString, "BRAIN_INTERVAL_SECONDS": "0.05",
                                     "PURGE_INTERVAL_SECONDS": "3600"]
                    if model {
                        variables["GEMINI_API_KEY"] = models.apiKey
                        variables["GEMINI_BASE_URL"] = geminiURL
                        variables["LLM_MODELS_SYMBI_BRAIN"] = "gemini:\(Self.model)"
                    }
                    variables.merge(extra) { _, new in new }
                    let fixed = variables
                    let app = try await buildHealthBrainApplication(try HealthBrainConfiguration(settings: .fixed(fixed)),
                                                                    dependencies: .init(clock: .manual(time)), logger: TestEnvironment.logger)
                    let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
                    try await app.test(.router) { client in
                        try await body(HealthBrainHarness(client: client, identity: identity, models: models, streams: StreamNames(prefix: prefix),
                                                          redis: redis, databaseURL: url, time: time, variables: fixed))
                    }
                    await redis.shutdown()
                }
            }
        }
    }

    /// A second replica on the same database and streams (and clock), while `body` runs.
    func replica(_ body: @Sendable () async throws -> Void) async throws {
        let app = try await buildHealthBrainApplication(try HealthBrainConfiguration(settings: .fixed(variables)),
                                                        dependencies: .init(clock: .manual(time)), logger: TestEnvironment.logger)
        try await app.test(.router) { _ in try await body() }
    }

    func headers(_ user: UUID, app: AppID = .symbi, key: String? = nil) async throws -> HTTPFields {
        var headers: HTTPFields = [.authorization: "Bearer \(try await identity.token(user: user, app: app))", .contentType: "application/json"]
        if let key { headers[.init("Idempotency-Key")!] = key }
        return headers
    }

    func get(_ uri: String, as user: UUID, app: AppID = .symbi, extra: HTTPFields = [:]) async throws -> TestResponse {
        var headers = try await headers(user, app: app)
        headers.append(contentsOf: extra)
        return try await client.execute(uri: uri, method: .get, headers: headers)
    }

    func send(_ method: HTTPRequest.Method, _ uri: String, as user: UUID, key: String? = nil, json: String) async throws -> TestResponse {
        try await client.execute(uri: uri, method: method, headers: try await headers(user, key: key), body: ByteBuffer(string: json))
    }

    /// One day's upload: `POST /v1/symbi/metrics`.
    func upload(_ user: UUID, date: String, zone: String = "Europe/Kyiv", source: String = "healthkit", steps: Int? = nil, sleep: Double? = nil,
                hrv: Double? = nil, recordedAt: Date? = nil) async throws -> TestResponse {
        var day: [String: Any] = ["date": date, "source": source]
        if let steps { day["steps"] = steps }
        if let sleep { day["sleepHours"] = sleep }
        if let hrv { day["hrvMs"] = hrv }
        if let recordedAt { day["recordedAt"] = Self.rfc3339(recordedAt) }
        let body = try JSONSerialization.data(withJSONObject: ["timeZone": zone, "days": [day]])
        return try await send(.post, "/v1/symbi/metrics", as: user, json: String(decoding: body, as: UTF8.self))
    }

    func json(_ response: TestResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
    }

    /// Publishes an event as its producer's outbox relay would.
    func publish<P: EventPayload>(_ payload: P, producer: String, id: UUID = .v7()) async throws {
        var envelope = try EventEnvelope(payload, producer: producer, subject: nil, occurredAt: time.now)
        envelope.id = id
        try await EventPublisher(redis: redis).publish(envelope, to: streams.name(of: P.stream))
    }

    /// Events health-brain published on a stream, of a type.
    func published(_ type: String, on stream: EventStream) async throws -> [EventEnvelope] {
        let reply = try await redis.send(["XRANGE", streams.name(of: stream), "-", "+"])
        return (reply.array ?? []).compactMap { $0.array?[1].array?[1].string }.compactMap { try? EventEnvelope.decode($0) }.filter { $0.type == type }
    }

    func count(_ sql: String) async throws -> Int {
        try await TestEnvironment.withPostgres(databaseURL) { client in
            let rows = try await client.query(PostgresQuery(unsafeSQL: sql), logger: TestEnvironment.logger)
            for try await n in rows.decode(Int.self) { return n }
            return -1
        }
    }

    func execute(_ sql: String) async throws {
        try await TestEnvironment.withPostgres(databaseURL) { client in
            _ = try await client.query(PostgresQuery(unsafeSQL: sql), logger: TestEnvironment.logger)
        }
    }

    static func rfc3339(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    /// A date from `YYYY-MM-DD HH:MM` in `zone`.
    static func date(_ text: String, _ zone: String) -> Date {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: zone)
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        guard let date = formatter.date(from: text) else { preconditionFailure("bad test date \(text)") }
        return date
    }
}
