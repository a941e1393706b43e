import EvolutionWorker
import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import LanternRedis
import LanternTestSupport
import PostgresNIO
import Testing

/// evolution-worker on its own database, stream prefix and picture folder; with `model`, Gemini is a fake on
/// loopback speaking its wire format. Jobs and deletions arrive as they do in production: on the bus.
struct EvolutionHarness {
    let streams: StreamNames
    let redis: RedisClient
    let databaseURL: String
    let folder: URL
    let fake: FakeLLMServers?

    static let model = EvolutionWorkerConfiguration.defaultImageModel

    /// - Parameters:
    ///   - fake: the fake Gemini; nil runs the local generator.
    ///   - extra: more variables (`EVOLUTION_MAX_ATTEMPTS`…).
    static func run(fake: FakeLLMServers? = nil, _ extra: [String: String] = [:], _ body: @Sendable (EvolutionHarness) async throws -> Void) async throws {
        if let fake {
            try await fake.run { gemini, _ in
                try await run(fake: fake, gemini: gemini, extra, body)
            }
        } else {
            try await run(fake: nil, gemini: nil, extra, body)
        }
    }

    private static func run(fake: FakeLLMServers?, gemini: String?, _ extra: [String: String], _ body: @Sendable (EvolutionHarness) async throws -> Void) async throws {
        try await TestEnvironment.withDatabase { url in
            let prefix = TestEnvironment.uniquePrefix()
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lantern-evolutions-\(prefix)")
            defer { try? FileManager.default.removeItem(at: folder) }
            var variables = [
                "DATABASE_URL": url, "REDIS_URL": try await TestEnvironment.redisURL(for: "evolution-worker", prefix: prefix), "STREAM_PREFIX": prefix, "LOG_LEVEL": "warning", "HTTP_PORT": "0",
                "SYMBI_STORAGE_DIR": folder.path, "EVOLUTION_INTERVAL_SECONDS": "0.05", "EVOLUTION_RETRY_BASE_SECONDS": "0.05",
                "EVOLUTION_RETRY_MAX_SECONDS": "0.2",
            ]
            if let gemini, let fake { variables.merge(["GEMINI_API_KEY": fake.apiKey, "GEMINI_BASE_URL": gemini]) { $1 } }
            variables.merge(extra) { $1 }
            let app = try await buildEvolutionWorkerApplication(try EvolutionWorkerConfiguration(settings: .fixed(variables)), logger: TestEnvironment.logger)
            let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
            try await withService(app) {
                let harness = EvolutionHarness(streams: StreamNames(prefix: prefix), redis: redis, databaseURL: url, folder: folder, fake: fake)
                #expect(try await eventually { (try? await harness.query("SELECT count(*)::int FROM evolution.jobs", as: Int.self)) != nil })
                try await body(harness)
            }
            await redis.shutdown()
        }
    }

    // MARK: Input

    /// Queues an image job as health-brain's outbox relay would; returns its envelope.
    @discardableResult
    func request(_ evolution: UUID = UUID(), user: UUID, stage: Int = 1, state: String = "vibrant", previous: UUID? = nil,
                 seed: String? = nil) async throws -> EventEnvelope {
        let payload = SymbiEvents.EvolutionRequested(evolutionId: evolution.lowercased, userId: user.lowercased, stage: stage, state: state,
                                                     previousEvolutionId: previous?.lowercased, previousImageKey: previous.map { "\($0.lowercased).png" },
                                                     seed: seed ?? evolution.lowercased)
        let envelope = try EventEnvelope(payload, producer: SymbiEvents.producer, subject: user.lowercased, occurredAt: Date())
        try await publish(envelope)
        return envelope
    }

    func publish(_ envelope: EventEnvelope) async throws {
        _ = try await EventPublisher(redis: redis).publish(envelope, to: streams.jobs("evolution"))
    }

    func deleteUser(_ user: UUID) async throws {
        let event = try EventEnvelope(IdentityEvents.UserDeleted(userId: user.lowercased, app: .symbi), producer: "identity", subject: user.lowercased,
                                      occurredAt: Date())
        _ = try await EventPublisher(redis: redis).publish(event, to: streams.events("identity"))
    }

    // MARK: Output

    /// Every `symbi.evolved` the worker announced.
    func evolved() async throws -> [SymbiEvents.Evolved] {
        try await entries(streams.events(SymbiEvents.workerProducer)).compactMap { fields in
            guard let raw = fields["event"], let envelope = try? EventEnvelope.decode(raw), envelope.type == SymbiEvents.Evolved.eventType else { return nil }
            return try envelope.payload(as: SymbiEvents.Evolved.self)
        }
    }

    /// Waits for the announcement of `evolution`.
    func waitForEvolved(_ evolution: UUID, timeout: Duration = .seconds(20)) async throws -> SymbiEvents.Evolved? {
        try await eventuallyValue(timeout: timeout) { try await evolved().first { $0.evolutionId == evolution.lowercased } }
    }

    func deadLetters() async throws -> [[String: String]] {
        try await entries(streams.deadLetter(of: streams.jobs("evolution")))
    }

    func entries(_ stream: String) async throws -> [[String: String]] {
        let reply = try await redis.send(["XRANGE", stream, "-", "+"])
        return (reply.array ?? []).compactMap { entry in
            guard let flat = entry.array?[1].array else { return nil }
            var fields: [String: String] = [:]
            stride(from: 0, to: flat.count - 1, by: 2).forEach { if let k = flat[$0].string, let v = flat[$0 + 1].string { fields[k] = v } }
            return fields
        }
    }

    /// The job's status and attempts, nil when there is no row.
    func job(_ evolution: UUID) async throws -> (status: String, attempts: Int, error: String?)? {
        try await TestEnvironment.withPostgres(databaseURL) { client in
            let rows = try await client.query("SELECT status, attempts, last_error FROM evolution.jobs WHERE evolution_id = \(evolution)", logger: TestEnvironment.logger)
            for try await (status, attempts, error) in rows.decode((String, Int, String?).self) { return (status, attempts, error) }
            return nil
        }
    }

    func picture(_ evolution: UUID) -> URL { folder.appendingPathComponent("\(evolution.lowercased).png") }

    func query<T: PostgresDecodable & Sendable>(_ sql: String, as: T.Type) async throws -> [T] {
        try await TestEnvironment.withPostgres(databaseURL) { client in
            let rows = try await client.query(PostgresQuery(unsafeSQL: sql), logger: TestEnvironment.logger)
            var values: [T] = []
            for try await value in rows.decode(T.self) { values.append(value) }
            return values
        }
    }
}

/// What the independent PNG decoder (`scripts/reference/png-inspect.py`, Python's zlib and nothing of Lantern's)
/// says about a file.
struct PNGInspection: Decodable {
    var width: Int
    var height: Int
    var chunks: [String]
    var metadata: [String]
    var pixelsSHA256: String
    var opaqueFraction: Double
    var purpleFraction: Double
    var distinctColors: Int

    static func of(_ file: URL) async throws -> PNGInspection {
        let script = ServiceList.root.appendingPathComponent("scripts/reference/png-inspect.py")
        let output = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path, file.path])
        guard output.status == 0 else {
            throw InspectionFailed(message: String(decoding: output.stdout, as: UTF8.self) + output.stderr)
        }
        return try JSONDecoder().decode(PNGInspection.self, from: output.stdout)
    }

    static func of(_ bytes: [UInt8]) async throws -> PNGInspection {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("inspect-\(UUID().uuidString).png")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try await of(file)
    }

    struct InspectionFailed: Error, CustomStringConvertible {
        var message: String
        var description: String { "the independent decoder refused the PNG: \(message)" }
    }
}
