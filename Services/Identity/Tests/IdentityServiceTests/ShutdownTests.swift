import AsyncHTTPClient
import Foundation
import IdentityService
import LanternContracts
import LanternEvents
import LanternRedis
import LanternTestSupport
import NIOCore
import Testing

@Suite("Graceful shutdown")
struct ShutdownTests {
    /// What SIGTERM does in a deployment, on a whole process (API and operations servers, database, Redis, outbox
    /// relay, watch, gauges, housekeeping). A part that throws while shutting down makes `ServiceGroup` cancel the
    /// others instead of stopping them in order, and a cancelled relay could wait for ever on a stopped database
    /// pool: the process must come back from `run()` without an error, and the event of a request answered just
    /// before must still reach the bus.
    @Test("SIGTERM stops every part in order, without an error, and an event committed just before is still published")
    func graceful() async throws {
        try await TestEnvironment.withDatabase { url in
            let prefix = TestEnvironment.uniquePrefix()
            let api = try freePort(), operations = try OperationsPort()
            let variables = ["DATABASE_URL": url, "REDIS_URL": TestEnvironment.redisURL, "STREAM_PREFIX": prefix, "LOG_LEVEL": "warning",
                             "HTTP_HOST": "127.0.0.1", "HTTP_PORT": String(api)].merging(operations.variables) { $1 }
            let app = try await buildIdentityApplication(try IdentityConfiguration(settings: .fixed(variables)), logger: TestEnvironment.logger)
            // withService rethrows whatever the process's run() throws once it is asked to stop.
            let (user, stopping): (String?, ContinuousClock.Instant) = try await withService(app) {
                #expect(try await eventually { try await operations.get("/health/ready").status == 200 })
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(api)/v1/auth/device")
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(string: #"{"deviceId":"\#(UUID().uuidString)","app":"luckyday"}"#))
                // Generous: a fresh machine starting every suite at once can take long to answer; only the stop is timed.
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
                #expect(response.status == .created)
                let body = try await response.body.collect(upTo: 1 << 20)
                let user = (try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])
                    .flatMap { $0["user"] as? [String: Any] }?["id"] as? String
                return (user, ContinuousClock.now)
            }
            // Only the stop is timed (starting, under the whole suite on 2 cores, can take long): every part is bounded
            // (the relay's last flush at 5 s), so this rules out waiting on something that is gone.
            #expect(ContinuousClock.now - stopping < .seconds(20), "shutting down must not wait on anything that is gone")

            let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
            let reply = try await redis.send(["XRANGE", StreamNames(prefix: prefix).events("identity"), "-", "+"])
            await redis.shutdown()
            let events = (reply.array ?? []).compactMap { $0.array?[1].array?[1].string }.compactMap { try? EventEnvelope.decode($0) }
            let subject = try #require(user)
            #expect(events.contains { $0.type == "user.created" && $0.subject == subject }, "\(events.map(\.type))")
        }
    }
}
