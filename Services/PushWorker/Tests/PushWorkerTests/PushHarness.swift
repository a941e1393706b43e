import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import LanternRedis
import LanternTestSupport
import PostgresNIO
import PushWorker
import Testing

/// The push worker on its own database and stream prefix, with APNs, FCM and Google OAuth faked on one local
/// TLS/HTTP/2 server. Devices and jobs arrive the way they do in production: as events on the bus.
struct PushHarness {
    let fake: FakePushServices
    let streams: StreamNames
    let redis: RedisClient
    let databaseURL: String

    /// - Parameter clock: the worker's clock; a manual one makes retries come due only when the test says so.
    static func run(_ extra: [String: String] = [:], clock: WallClock = .system, _ body: @Sendable (PushHarness) async throws -> Void) async throws {
        let fake = try await FakePushServices()
        try await fake.serve { baseURL in
            try await TestEnvironment.withDatabase { url in
                let prefix = TestEnvironment.uniquePrefix()
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lantern-push-\(prefix)")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: directory) }
                let keyFile = directory.appendingPathComponent("AuthKey.p8")
                try fake.apnsKeyPEM.write(to: keyFile, atomically: true, encoding: .utf8)
                let accountFile = directory.appendingPathComponent("service-account.json")
                try fake.serviceAccountJSON(baseURL: baseURL).write(to: accountFile)
                var variables = [
                    "DATABASE_URL": url, "REDIS_URL": try await TestEnvironment.redisURL(for: "push-worker", prefix: prefix), "STREAM_PREFIX": prefix, "LOG_LEVEL": "warning", "HTTP_PORT": "0",
                    "APNS_KEY_FILE": keyFile.path, "APNS_KEY_ID": fake.apnsKeyID, "APNS_TEAM_ID": fake.teamID, "APNS_URL": baseURL.absoluteString,
                    "FCM_SERVICE_ACCOUNT_FILE": accountFile.path, "FCM_URL": baseURL.absoluteString,
                    "PUSH_TRUST_ROOTS_FILE": try fake.tls.writeCA(to: directory),
                ]
                variables.merge(extra) { $1 }
                let app = try await buildPushWorkerApplication(try PushWorkerConfiguration(settings: .fixed(variables)),
                                                               dependencies: .init(clock: clock), logger: TestEnvironment.logger)
                let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
                try await withService(app) {
                    let harness = PushHarness(fake: fake, streams: StreamNames(prefix: prefix), redis: redis, databaseURL: url)
                    // Start-up done: the worker's migrations created its tables.
                    #expect(try await eventually { (try? await harness.query("SELECT count(*)::int FROM push.devices", as: Int.self)) != nil })
                    try await body(harness)
                }
                await redis.shutdown()
            }
        }
    }

    /// Registers a device through `device.registered` and waits until the registry has it.
    func register(_ user: UUID, device: String, platform: String, token: String, locale: String? = nil, app: String = "pairly") async throws {
        var data: [String: JSONValue] = ["userId": .string(user.lowercased), "app": .string(app), "deviceId": .string(device),
                                         "platform": .string(platform), "pushToken": .string(token)]
        if let locale { data["locale"] = .string(locale) }
        try await identityEvent("device.registered", subject: user, data: .object(data))
        let stored = try await eventually {
            let current = try await tokenOf(user, device)
            return current == token
        }
        #expect(stored)
    }

    func identityEvent(_ type: String, subject: UUID, data: JSONValue, at date: Date = Date()) async throws {
        let event = EventEnvelope(type: type, occurredAt: date, producer: "identity", subject: subject.lowercased, data: data)
        _ = try await EventPublisher(redis: redis).publish(event, to: streams.events("identity"))
    }

    /// Queues a job on `lantern.jobs.push`, as a producer's outbox relay would.
    @discardableResult
    func push(_ request: PushRequest) async throws -> EventEnvelope {
        let job = try request.envelope(producer: "test", at: Date())
        try await publish(job: job)
        return job
    }

    /// Queues `job` as it is (a job no producer of this build could write, say).
    func publish(job: EventEnvelope) async throws {
        _ = try await EventPublisher(redis: redis).publish(job, to: streams.jobs("push"))
    }

    func deviceCount(_ user: UUID) async throws -> Int {
        try await query("SELECT count(*)::int FROM push.devices WHERE user_id = '\(user.lowercased)'", as: Int.self).first ?? -1
    }

    func tokenOf(_ user: UUID, _ device: String) async throws -> String? {
        try await query("SELECT push_token FROM push.devices WHERE user_id = '\(user.lowercased)' AND device_id = '\(device)'", as: String.self).first
    }

    func query<T: PostgresDecodable & Sendable>(_ sql: String, as: T.Type) async throws -> [T] {
        try await TestEnvironment.withPostgres(databaseURL) { client in
            let rows = try await client.query(PostgresQuery(unsafeSQL: sql), logger: TestEnvironment.logger)
            var values: [T] = []
            for try await value in rows.decode(T.self) { values.append(value) }
            return values
        }
    }

    /// Entries of `lantern.dlq.jobs.push` as field maps.
    /// When the retry of `user`'s push making `attempt` is due (the retry set's score), if it is scheduled.
    func retryDue(_ user: UUID, attempt: Int) async throws -> Date? {
        let reply = try await redis.send(["ZRANGE", "\(streams.prefix).push.retries", "0", "-1", "WITHSCORES"])
        let flat = reply.array ?? []
        for index in stride(from: 0, to: flat.count - 1, by: 2) {
            guard let member = flat[index].string, let score = flat[index + 1].string.flatMap(Double.init),
                  let item = try? JSONDecoder.lantern.decode(RetryQueue.Item.self, from: Data(member.utf8)) else { continue }
            if item.request.userId == user.lowercased && item.attempt == attempt { return Date(timeIntervalSince1970: score / 1000) }
        }
        return nil
    }

    func deadLetters() async throws -> [[String: String]] {
        let reply = try await redis.send(["XRANGE", streams.deadLetter(of: streams.jobs("push")), "-", "+"])
        return (reply.array ?? []).compactMap { entry in
            guard let flat = entry.array?[1].array else { return nil }
            var fields: [String: String] = [:]
            stride(from: 0, to: flat.count - 1, by: 2).forEach { if let k = flat[$0].string, let v = flat[$0 + 1].string { fields[k] = v } }
            return fields
        }
    }

    static func apnsToken() -> String { (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined() }
    static func fcmToken() -> String { "fcm-" + UUID().uuidString + ":APA91b" + String(UInt64.random(in: 1...UInt64.max), radix: 36) }
}

extension PushRequest {
    static func newMoment(to user: UUID, from name: String = "Ana", delivery: Delivery = .alert) -> PushRequest {
        PushRequest(userId: user.lowercased, app: .pairly, kind: "pairly.moment_shared", delivery: delivery,
                    messageKey: delivery == .alert ? "pairly.moment_shared" : nil, args: ["partnerName": name],
                    collapseKey: delivery == .alert ? "pairly.moment" : "pairly.moment.refresh", ttlSeconds: 86_400,
                    data: ["momentId": "0193f4a2-7c21-7e4b-8a6d-1f2e3d4c5b6a"])
    }
}
