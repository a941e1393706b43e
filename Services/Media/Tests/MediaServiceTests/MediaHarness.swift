import Foundation
import Hummingbird
import HummingbirdTesting
import LanternContracts
import LanternCore
import LanternEvents
import LanternRedis
import LanternObjectStorage
import LanternTestSupport
import MediaService
import NIOCore
import NIOFoundationCompat
import PostgresNIO
import Testing

/// media on its own database, stream prefix and storage folder, with a fake identity issuing tokens. Pairings
/// arrive the way they do in production: as identity events on the bus.
struct MediaHarness {
    let client: any TestClientProtocol
    let identity: FakeIdentity
    let streams: StreamNames
    let redis: RedisClient
    let databaseURL: String
    let storage: URL
    /// The bucket photos go to with `MEDIA_STORAGE=s3` (nil: the folder `storage`).
    let bucket: S3Bucket?

    /// Where media keeps photos in a test: its folder, or a bucket of the S3-compatible test server.
    enum Storage: String, CaseIterable, Sendable { case directory, s3 }

    static func run(maxBytes: Int? = nil, storage mode: Storage = .directory, _ body: @Sendable (MediaHarness) async throws -> Void) async throws {
        let identity = try await FakeIdentity()
        try await identity.serve { identityURL in
            try await TestEnvironment.withDatabase { url in
                let prefix = TestEnvironment.uniquePrefix()
                let storage = FileManager.default.temporaryDirectory.appendingPathComponent("lantern-media-\(prefix)")
                defer { try? FileManager.default.removeItem(at: storage) }
                var variables = ["OPS_PORT": "0", "DATABASE_URL": url, "REDIS_URL": try await TestEnvironment.redisURL(for: "media", prefix: prefix), "STREAM_PREFIX": prefix, "LOG_LEVEL": "warning",
                                 "IDENTITY_URL": identityURL.absoluteString, "MEDIA_STORAGE_DIR": storage.path]
                if let maxBytes { variables["MOMENT_MAX_BYTES"] = String(maxBytes) }
                var bucket: S3Bucket?
                if mode == .s3 {
                    let s3 = try await FakeS3Server.shared.connection()
                    let created = try await s3.newBucket()
                    bucket = created
                    variables.merge(["MEDIA_STORAGE": "s3", "MEDIA_S3_ENDPOINT": s3.endpoint, "MEDIA_S3_BUCKET": created.bucket,
                                     "MEDIA_S3_ACCESS_KEY_ID": s3.accessKeyId, "MEDIA_S3_SECRET_ACCESS_KEY": s3.secretAccessKey]) { $1 }
                }
                let photos = bucket
                let app = try await buildMediaApplication(try MediaConfiguration(settings: .fixed(variables)), logger: TestEnvironment.logger)
                let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
                try await app.test(.router) { client in
                    try await body(MediaHarness(client: client, identity: identity, streams: StreamNames(prefix: prefix), redis: redis,
                                                databaseURL: url, storage: storage, bucket: photos))
                }
                await redis.shutdown()
            }
        }
    }

    /// Publishes an identity event, as identity's outbox relay would.
    func identityEvent(_ type: String, subject: UUID, data: JSONValue) async throws {
        let event = EventEnvelope(type: type, occurredAt: Date(), producer: "identity", subject: subject.lowercased, data: data)
        try await EventPublisher(redis: redis).publish(event, to: streams.events("identity"))
    }

    /// Pairs two users through `pairing.established` and waits until media has taken it in.
    func pair(_ a: UUID, _ b: UUID, names: (String, String) = ("Ana", "Bohdan")) async throws -> UUID {
        let pairing = UUID()
        try await identityEvent("profile.renamed", subject: a, data: .object(["userId": .string(a.lowercased), "app": .string("pairly"), "displayName": .string(names.0)]))
        try await identityEvent("profile.renamed", subject: b, data: .object(["userId": .string(b.lowercased), "app": .string("pairly"), "displayName": .string(names.1)]))
        try await identityEvent("pairing.established", subject: b, data: .object([
            "pairingId": .string(pairing.lowercased), "app": .string("pairly"), "invitedBy": .string(a.lowercased),
            "userIds": .array([.string(a.lowercased), .string(b.lowercased)]),
        ]))
        let ready = try await eventually { try await count("SELECT count(*) FROM media.partners WHERE pairing_id = '\(pairing.lowercased)'") == 2 }
        #expect(ready)
        _ = try await eventually { try await count("SELECT count(*) FROM media.names WHERE user_id = '\(b.lowercased)'") == 1 }
        return pairing
    }

    func count(_ sql: String) async throws -> Int {
        try await TestEnvironment.withPostgres(databaseURL) { client in
            let rows = try await client.query(PostgresQuery(unsafeSQL: sql), logger: TestEnvironment.logger)
            for try await n in rows.decode(Int.self) { return n }
            return -1
        }
    }

    func upload(_ bytes: [UInt8], as user: UUID, key: String? = nil, contentType: String = "image/jpeg") async throws -> TestResponse {
        var headers: HTTPFields = [.authorization: "Bearer \(try await identity.token(user: user))", .contentType: contentType]
        if let key { headers[.init("Idempotency-Key")!] = key }
        return try await client.execute(uri: "/v1/moments", method: .post, headers: headers, body: ByteBuffer(bytes: bytes))
    }

    func get(_ uri: String, as user: UUID, headers extra: HTTPFields = [:]) async throws -> TestResponse {
        var headers = extra
        headers[.authorization] = "Bearer \(try await identity.token(user: user))"
        return try await client.execute(uri: uri, method: .get, headers: headers)
    }

    /// Photos kept: files in the folder, or objects under the bucket's `moments/` prefix.
    func storedFiles() async -> Int {
        if let bucket { return (try? await bucket.list(prefix: "moments").count) ?? -1 }
        return (try? FileManager.default.contentsOfDirectory(atPath: storage.path).count) ?? 0
    }

    func events(_ type: String) async throws -> [EventEnvelope] {
        let reply = try await redis.send(["XRANGE", streams.events("media"), "-", "+"])
        return (reply.array ?? []).compactMap { $0.array?[1].array?[1].string }.compactMap { try? EventEnvelope.decode($0) }.filter { $0.type == type }
    }
}

enum Fixtures {
    static func bytes(_ name: String) throws -> [UInt8] {
        let url = ServiceList.root.appendingPathComponent("Tests/ImageSanitizerTests/Fixtures/\(name)")
        return Array(try Data(contentsOf: url))
    }

    static func contains(_ bytes: some Collection<UInt8>, _ text: String) -> Bool {
        let haystack = Array(bytes), needle = Array(text.utf8)
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}
