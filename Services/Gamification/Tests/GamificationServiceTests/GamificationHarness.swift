import Foundation
import GamificationService
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

/// gamification on its own database and stream prefix, with a fake identity issuing tokens and one manual clock for
/// both. Activity arrives the way it does in production: content's events on the bus.
struct GamificationHarness {
    let client: any TestClientProtocol
    let identity: FakeIdentity
    let streams: StreamNames
    let redis: RedisClient
    let databaseURL: String
    let time: ManualTime
    let variables: [String: String]

    static func run(start: Date = Date(timeIntervalSince1970: 1_795_000_000), _ body: @Sendable (GamificationHarness) async throws -> Void) async throws {
        let time = ManualTime(start)
        let identity = try await FakeIdentity(clock: .manual(time))
        try await identity.serve { identityURL in
            try await TestEnvironment.withDatabase { url in
                let prefix = TestEnvironment.uniquePrefix()
                let variables = ["OPS_PORT": "0", "DATABASE_URL": url, "REDIS_URL": try await TestEnvironment.redisURL(for: "gamification", prefix: prefix), "STREAM_PREFIX": prefix,
                                 "LOG_LEVEL": "warning", "IDENTITY_URL": identityURL.absoluteString, "REMINDER_INTERVAL_SECONDS": "0.1"]
                let app = try await buildGamificationApplication(try GamificationConfiguration(settings: .fixed(variables)),
                                                                 dependencies: .init(clock: .manual(time)), logger: TestEnvironment.logger)
                let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
                try await app.test(.router) { client in
                    try await body(GamificationHarness(client: client, identity: identity, streams: StreamNames(prefix: prefix), redis: redis,
                                                       databaseURL: url, time: time, variables: variables))
                }
                await redis.shutdown()
            }
        }
    }

    /// A second replica on the same database and streams (and clock), while `body` runs: its periodic work competes
    /// with the first one's.
    func replica(_ body: @Sendable () async throws -> Void) async throws {
        let app = try await buildGamificationApplication(try GamificationConfiguration(settings: .fixed(variables)),
                                                         dependencies: .init(clock: .manual(time)), logger: TestEnvironment.logger)
        try await app.test(.router) { _ in try await body() }
    }

    func headers(_ user: UUID, app: AppID = .roastmelater, key: String? = nil) async throws -> HTTPFields {
        var headers: HTTPFields = [.authorization: "Bearer \(try await identity.token(user: user, app: app))", .contentType: "application/json"]
        if let key { headers[.init("Idempotency-Key")!] = key }
        return headers
    }

    /// `POST /v1/gamification/check-ins` at `at` (default: now) in `zone`.
    func checkIn(_ user: UUID, zone: String, at: Date? = nil, key: String = UUID().uuidString, language: String? = nil) async throws -> TestResponse {
        var body: [String: String] = ["timeZone": zone]
        if let at { body["occurredAt"] = Self.rfc3339(at) }
        let uri = "/v1/gamification/check-ins" + (language.map { "?language=\($0)" } ?? "")
        return try await client.execute(uri: uri, method: .post, headers: try await headers(user, key: key),
                                        body: ByteBuffer(data: try JSONEncoder().encode(body)))
    }

    func get(_ uri: String, as user: UUID, app: AppID = .roastmelater) async throws -> TestResponse {
        try await client.execute(uri: uri, method: .get, headers: try await headers(user, app: app))
    }

    func send(_ method: HTTPRequest.Method, _ uri: String, as user: UUID, json: String? = nil) async throws -> TestResponse {
        try await client.execute(uri: uri, method: method, headers: try await headers(user), body: json.map { ByteBuffer(string: $0) })
    }

    /// Publishes an event as its producer's outbox relay would.
    func publish<P: EventPayload>(_ payload: P, producer: String = "content", id: UUID = .v7()) async throws {
        var envelope = try EventEnvelope(payload, producer: producer, subject: nil, occurredAt: time.now)
        envelope.id = id
        try await EventPublisher(redis: redis).publish(envelope, to: streams.name(of: P.stream))
    }

    func roastGenerated(_ user: UUID, category: String = "meetings", spice: Int = 3, collection: String? = nil, scenario: String? = nil,
                        size: Int? = nil) -> ContentEvents.RoastGenerated {
        ContentEvents.RoastGenerated(roastId: UUID().lowercased, userId: user.lowercased, category: category, spice: spice, mood: nil, language: "en",
                                     artisanal: true, localDate: "2026-11-26", createdAt: time.now, collection: collection, scenario: scenario,
                                     collectionSize: size)
    }

    /// Events gamification published on a stream, of a type.
    func published(_ type: String, on stream: String) async throws -> [EventEnvelope] {
        let reply = try await redis.send(["XRANGE", stream, "-", "+"])
        return (reply.array ?? []).compactMap { $0.array?[1].array?[1].string }.compactMap { try? EventEnvelope.decode($0) }.filter { $0.type == type }
    }

    func count(_ sql: String) async throws -> Int {
        try await TestEnvironment.withPostgres(databaseURL) { client in
            let rows = try await client.query(PostgresQuery(unsafeSQL: sql), logger: TestEnvironment.logger)
            for try await n in rows.decode(Int.self) { return n }
            return -1
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

extension TestResponse {
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]) ?? [:] }
}

extension [String: Any] {
    subscript(path path: String) -> Any? {
        var value: Any? = self
        for part in path.split(separator: ".") { value = (value as? [String: Any])?[String(part)] }
        return value
    }
}
