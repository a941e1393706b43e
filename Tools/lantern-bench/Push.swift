import ArgumentParser
import AsyncHTTPClient
import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import LanternRedis
import LanternTestSupport
import Logging
import NIOCore

/// The push worker (a real `push-worker` process) against a local fake APNs over TLS + HTTP/2 that checks every
/// request's ES256 provider token: notifications per second with multiplexing, and how many connections it took.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "push", abstract: "push-worker → fake APNs throughput")

    @Option(help: "the push-worker executable") var worker: String
    @Option(help: "PostgreSQL URL for the worker's schema") var databaseURL: String
    @Option(help: "Redis URL") var redis = "redis://127.0.0.1:63809/0"
    @Option(help: "HTTP port of the worker (health, metrics)") var port = 18087
    @Option(help: "recipients, one iPhone each") var users = 1_000
    @Option(help: "push jobs in the measured run") var jobs = 20_000
    @Option(help: "jobs per XADD pipeline (as the outbox relay publishes)") var batch = 200

    func run() async throws {
        let fake = try await FakePushServices()
        let (users, jobs, batch) = (self.users, self.jobs, self.batch)
        let (worker, databaseURL, redisURL, port) = (self.worker, self.databaseURL, self.redis, self.port)
        try await fake.serve { baseURL in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lantern-bench-push-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let keyFile = directory.appendingPathComponent("AuthKey.p8")
            try fake.apnsKeyPEM.write(to: keyFile, atomically: true, encoding: .utf8)
            let prefix = "benchpush\(UInt16.random(in: .min ... .max))"
            let streams = StreamNames(prefix: prefix)

            let process = Process()
            process.executableURL = URL(fileURLWithPath: worker)
            process.environment = ProcessInfo.processInfo.environment.merging([
                "DATABASE_URL": databaseURL, "REDIS_URL": redisURL, "STREAM_PREFIX": prefix, "HTTP_HOST": "127.0.0.1", "HTTP_PORT": String(port),
                "OPS_PORT": String(port + ProcessSettings.operationsPortOffset),
                "LOG_LEVEL": "warning", "APNS_KEY_FILE": keyFile.path, "APNS_KEY_ID": fake.apnsKeyID, "APNS_TEAM_ID": fake.teamID,
                "APNS_URL": baseURL.absoluteString, "PUSH_TRUST_ROOTS_FILE": try fake.tls.writeCA(to: directory),
            ]) { $1 }
            try process.run()
            defer { process.terminate() }
            let http = HTTPClient.shared
            try await waitFor(seconds: 60) {
                (try? await http.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port + ProcessSettings.operationsPortOffset)/health/ready"),
                                         timeout: .seconds(1)))?.status == .ok
            }

            // Devices arrive as identity's events; wait until the registry holds them all.
            let client = RedisClient(endpoint: try RedisEndpoint(url: redisURL), size: 2)
            let publisher = EventPublisher(redis: client, maxLength: 1_000_000)
            let recipients = (0..<users).map { _ in UUID() }
            let registrations = try recipients.map { user in
                let token = (0..<32).map { _ in UInt8.random(in: 0...255) }.hexEncoded
                let event = EventEnvelope(type: "device.registered", occurredAt: Date(), producer: "identity", subject: user.lowercased, data: .object([
                    "userId": .string(user.lowercased), "app": .string("pairly"), "deviceId": .string("iphone"),
                    "platform": .string("ios"), "pushToken": .string(token), "locale": .string("en"),
                ]))
                return (streams.events("identity"), try event.encoded())
            }
            for chunk in stride(from: 0, to: registrations.count, by: batch) {
                try await publisher.publish(batch: Array(registrations[chunk..<min(chunk + batch, registrations.count)]))
            }
            try await waitFor(seconds: 120) { try await handled(http: http, port: port, stream: streams.events("identity")) >= users }

            // Warm-up: one push per recipient opens the connection and signs the provider token.
            func publishJobs(_ count: Int) async throws {
                let encoded = try (0..<count).map { i -> (String, String) in
                    let request = PushRequest(userId: recipients[i % users].lowercased, app: .pairly, kind: "pairly.moment_shared", delivery: .alert,
                                              messageKey: "pairly.moment_shared", args: ["partnerName": "Ana"], collapseKey: "pairly.moment",
                                              data: ["momentId": UUID.v7().lowercased])
                    return (streams.jobs("push"), try request.envelope(producer: "bench", at: Date()).encoded())
                }
                for chunk in stride(from: 0, to: encoded.count, by: batch) {
                    try await publisher.publish(batch: Array(encoded[chunk..<min(chunk + batch, encoded.count)]))
                }
            }
            try await publishJobs(min(users, 500))
            let warm = min(users, 500)
            try await waitFor(seconds: 60) { fake.apnsRequests.count >= warm }

            let started = ContinuousClock.now
            try await publishJobs(jobs)
            try await waitFor(seconds: 600) { fake.apnsRequests.count >= warm + jobs }
            let elapsed = ContinuousClock.now - started
            let seconds = elapsed.inSeconds
            let requests = fake.apnsRequests
            let connections = Set(requests.compactMap(\.connection)).count
            let http2 = requests.allSatisfy(\.http2)
            let failed = requests.count - (warm + jobs)
            print(String(format: "push.apns notifications=%d seconds=%.2f rate=%.0f/s connections=%d http2=%@ provider_tokens=%d extra_requests=%d",
                         jobs, seconds, Double(jobs) / seconds, connections, http2 ? "yes" : "no", fake.providerTokensSeen, failed))
            await client.shutdown()
        }
    }

    /// `lantern_events_handled_total` of the worker for `stream`, read from its operations port's /metrics.
    func handled(http: HTTPClient, port: Int, stream: String) async throws -> Int {
        let response = try await http.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port + ProcessSettings.operationsPortOffset)/metrics"),
                                              timeout: .seconds(5))
        let text = String(buffer: try await response.body.collect(upTo: 4 << 20))
        return text.split(separator: "\n").filter { $0.hasPrefix("lantern_events_handled_total{") && $0.contains("\"\(stream)\"") && $0.contains("result=\"ok\"") }
            .compactMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) }.reduce(0, +)
    }
}

func waitFor(seconds: Int, _ condition: @Sendable () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw BenchError("timed out after \(seconds) s")
}
