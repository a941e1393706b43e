import ArgumentParser
import AsyncHTTPClient
import EvolutionWorker
import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import LanternRedis
import LanternRendering
import LanternTestSupport
import Logging
import Synchronization

/// evolution-worker: Lantern's own drawing of an evolution (the time of one 1024×1024 picture), and a burst of jobs
/// against a fake Gemini image model at its rate limit (a real `evolution-worker` process).
struct EvolutionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "evolution", abstract: "evolution-worker: the local drawing, a burst of image jobs",
                                                    subcommands: [Draw.self, Burst.self])

    /// The local generator as the worker runs it (SVG → librsvg on Cairo → PNG), every stage and mood in turn.
    struct Draw: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "the local generator's time per picture")
        @Option(help: "side of the picture, pixels") var size = 1024
        @Option(help: "pictures drawn (after 3 for warm-up)") var count = 60

        func run() async throws {
            let painter = LocalPainter(size: size)
            func job(_ i: Int) -> EvolutionJob {
                EvolutionJob(evolutionId: UUID(), userId: UUID(), stage: i % 8 + 1, state: ["vibrant", "resting", "stressed"][i % 3],
                             previousImageKey: nil, seed: "bench-\(i)", request: "")
            }
            for i in 0..<3 { _ = try await painter.paint(job(i), previous: nil) }
            var millis: [Double] = []
            var bytes = 0
            for i in 0..<count {
                let started = ContinuousClock.now
                let image = try await painter.paint(job(i), previous: nil)
                millis.append((ContinuousClock.now - started).inSeconds * 1000)
                bytes += image.png.count
            }
            millis.sort()
            let at = { (q: Double) in millis[min(millis.count - 1, Int(Double(millis.count) * q))] }
            print(String(format: "evolution.draw size=%d count=%d p50=%.1fms p95=%.1fms max=%.1fms mean_png=%.0fKB", size, count, at(0.5), at(0.95),
                         millis.last ?? .nan, Double(bytes) / Double(max(count, 1)) / 1024))
        }
    }

    /// `jobs` evolution jobs at once on `lantern.jobs.evolution`; the worker draws them with a fake Gemini that takes
    /// `rate` requests a second (then 429 with `RetryInfo`). Then: every job announced once (none lost, none twice),
    /// the calls the fake took and refused, and the worker's resident memory by tenth of the jobs done.
    struct Burst: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "a burst of image jobs, the fake image model at its rate limit")
        @Option(help: "the evolution-worker executable") var worker: String
        @Option(help: "PostgreSQL URL for the worker's schema") var databaseURL: String
        @Option(help: "Redis URL") var redis = "redis://127.0.0.1:63809/0"
        @Option(help: "HTTP port of the worker") var port = 18088
        @Option(help: "jobs") var jobs = 1_000
        @Option(help: "requests per second the fake image model takes before answering 429") var rate = 5
        @Option(help: "pictures the worker draws at once") var concurrency = 8
        @Option(help: "seconds to wait for every job") var timeout = 900

        func run() async throws {
            let logger = Logger(label: "bench")
            // The model's answer: a real 1024×1024 PNG (the worker decodes and draws it again each time).
            let answer = try await LocalPainter.render(GhostDrawing(stage: 4, seed: "bench", tone: .bright), size: 1024)
            let fake = FakeLLMServers(defaultBehaviour: .picture(answer), ratePerSecond: rate, keepsRequests: false)
            let (jobs, worker, databaseURL, redisURL, port, concurrency, timeout) = (self.jobs, self.worker, self.databaseURL, self.redis, self.port,
                                                                                    self.concurrency, self.timeout)
            try await fake.run { geminiURL, _ in
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lantern-bench-evolution-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: folder) }
                let prefix = "benchevolution\(UInt16.random(in: .min ... .max))"
                let streams = StreamNames(prefix: prefix)
                let process = Process()
                process.executableURL = URL(fileURLWithPath: worker)
                process.environment = ProcessInfo.processInfo.environment.merging([
                    "DATABASE_URL": databaseURL, "REDIS_URL": redisURL, "STREAM_PREFIX": prefix, "HTTP_HOST": "127.0.0.1", "HTTP_PORT": String(port),
                    "OPS_PORT": String(port + ProcessSettings.operationsPortOffset), "LOG_LEVEL": "error", "SYMBI_STORAGE_DIR": folder.path,
                    "GEMINI_API_KEY": fake.apiKey, "GEMINI_BASE_URL": geminiURL, "EVOLUTION_CONCURRENCY": String(concurrency),
                    "EVOLUTION_INTERVAL_SECONDS": "0.1", "EVOLUTION_RETRY_BASE_SECONDS": "1", "EVOLUTION_RETRY_MAX_SECONDS": "10",
                ]) { $1 }
                try process.run()
                defer { process.terminate() }
                let pid = process.processIdentifier
                try await waitFor(seconds: 60) {
                    (try? await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port + ProcessSettings.operationsPortOffset)/health/ready"),
                                                          timeout: .seconds(1)))?.status == .ok
                }
                let client = RedisClient(endpoint: try RedisEndpoint(url: redisURL), size: 2)
                defer { Task { await client.shutdown() } }
                let publisher = EventPublisher(redis: client, maxLength: 1_000_000)
                let requests = try (0..<jobs).map { i -> EventEnvelope in
                    let evolution = UUID(), user = UUID()
                    return try EventEnvelope(SymbiEvents.EvolutionRequested(evolutionId: evolution.lowercased, userId: user.lowercased, stage: i % 8 + 1,
                                                                             state: "vibrant", previousEvolutionId: nil, previousImageKey: nil,
                                                                             seed: evolution.lowercased),
                                             producer: SymbiEvents.producer, subject: user.lowercased, occurredAt: Date())
                }
                let rssStart = Memory.rss(pid: pid)
                let started = ContinuousClock.now
                // All at once, as an outbox relay's pipelines would after an outage (Req 14.5).
                let stream = streams.jobs("evolution")
                for chunk in stride(from: 0, to: requests.count, by: 200) {
                    try await publisher.publish(batch: try requests[chunk..<min(chunk + 200, requests.count)].map { (stream, try $0.encoded()) })
                }
                // Read the announcements as health-brain would: every symbi.evolved, counted by evolution.
                let evolvedStream = streams.events(SymbiEvents.workerProducer)
                var seen: [String: Int] = [:]
                var last = "0-0"
                var tenths: [String] = []
                var peak = rssStart
                while seen.count < jobs, ContinuousClock.now - started < .seconds(timeout) {
                    let reply = try await client.send(["XREAD", "COUNT", "1000", "BLOCK", "500", "STREAMS", evolvedStream, last])
                    for entry in StreamEntry.entries(ofXREAD: reply) {
                        last = entry.id
                        guard let raw = entry.fields["event"], let envelope = try? EventEnvelope.decode(raw),
                              let evolved = try? envelope.payload(as: SymbiEvents.Evolved.self) else { continue }
                        seen[evolved.evolutionId, default: 0] += 1
                    }
                    let rss = Memory.rss(pid: pid)
                    peak = max(peak, rss)
                    if seen.count * 10 >= (tenths.count + 1) * jobs { tenths.append(String(format: "%.1f", rss)) }
                }
                let seconds = (ContinuousClock.now - started).inSeconds
                try await Task.sleep(for: .seconds(2))  // a second announcement of anything would come by now
                let more = try await client.send(["XREAD", "COUNT", "100000", "STREAMS", evolvedStream, last])
                for entry in StreamEntry.entries(ofXREAD: more) {
                    guard let raw = entry.fields["event"], let envelope = try? EventEnvelope.decode(raw),
                          let evolved = try? envelope.payload(as: SymbiEvents.Evolved.self) else { continue }
                    seen[evolved.evolutionId, default: 0] += 1
                }
                let wanted = Set(requests.compactMap { try? $0.payload(as: SymbiEvents.EvolutionRequested.self).evolutionId })
                let lost = wanted.subtracting(seen.keys).count
                let twice = seen.values.filter { $0 > 1 }.count
                let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".png") }.count) ?? -1
                let dead = try await client.send(["XLEN", streams.deadLetter(of: streams.jobs("evolution"))]).int ?? 0
                let (calls, limited) = fake.calls
                logger.debug("burst done")
                print("evolution.burst.rss_by_tenth_done MB=" + tenths.joined(separator: ","))
                print(String(format: "evolution.burst jobs=%d done=%d lost=%d twice=%d dead_lettered=%d pictures=%d calls=%d refused_429=%d rate=%d/s concurrency=%d seconds=%.1f per_second=%.1f rss_start=%.1fMB rss_peak=%.1fMB rss_end=%.1fMB",
                             jobs, seen.count, lost, twice, dead, files, calls, limited, rate, concurrency, seconds, Double(seen.count) / seconds,
                             rssStart, peak, Memory.rss(pid: pid)))
            }
        }
    }
}
