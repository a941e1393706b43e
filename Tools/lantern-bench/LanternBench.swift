import ArgumentParser
import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import LanternRedis
import LanternTestSupport
import Logging
import ServiceLifecycle
import Synchronization

/// Benchmarks that need more than wrk: the event bus. Run by `make bench` (scripts/bench.sh).
@main
struct LanternBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lantern-bench", abstract: "Lantern benchmarks (see docs/benchmarks.md)", subcommands: [Bus.self, Memory.self, RealtimeCommand.self, PushCommand.self, LuckyDayCommand.self, LLMCommand.self, FakeLLMCommand.self, AstroSvitlaCommand.self, RoastMeLaterCommand.self, GamificationCommand.self, SymbiCommand.self, EvolutionCommand.self, HelloServerCommand.self])
}

/// Publish→consume through Redis Streams with one consumer group: throughput, then latency at a fixed rate.
struct Bus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "event bus throughput and end-to-end latency")

    @Option(help: "Redis URL") var redis = "redis://127.0.0.1:63809/0"
    @Option(help: "events in the throughput run") var events = 50_000
    @Option(help: "concurrent publishers in the throughput run") var publishers = 4
    @Option(help: "events per XADD pipeline in the batched run (the outbox relay publishes this way)") var batch = 100
    @Option(help: "events per second in the latency run") var rate = 1_000
    @Option(help: "seconds of the latency run") var seconds = 10

    func run() async throws {
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        let endpoint = try RedisEndpoint(url: redis)
        let streams = StreamNames(prefix: "bench\(UInt16.random(in: .min ... .max))")
        let client = RedisClient(endpoint: endpoint, size: publishers)
        let publisher = EventPublisher(redis: client, maxLength: 1_000_000)

        // Throughput, twice: one XADD per round trip, then pipelined batches as the outbox relay sends them.
        for batchSize in [1, batch] {
            let stream = streams.events("throughput\(batchSize)")
            let received = Counter()
            let consumer = StreamConsumer(endpoint: endpoint, streams: streams, options: Self.options(stream), logger: logger) { _ in
                received.increment()
            }
            let total = events
            let publishers = self.publishers
            let (publishSeconds, endToEndSeconds) = try await withService(consumer, logger: logger) {
                let started = ContinuousClock.now
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for p in 0..<publishers {
                        group.addTask {
                            var remaining = total / publishers + (p < total % publishers ? 1 : 0)
                            while remaining > 0 {
                                let n = min(batchSize, remaining)
                                if n == 1 {
                                    try await publisher.publish(Self.envelope(sentAt: 0), to: stream)
                                } else {
                                    try await publisher.publish(batch: try (0..<n).map { _ in (stream, try Self.envelope(sentAt: 0).encoded()) })
                                }
                                remaining -= n
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let published = ContinuousClock.now - started
                while received.value < total { try await Task.sleep(for: .milliseconds(1)) }
                return (published.inSeconds, (ContinuousClock.now - started).inSeconds)
            }
            print(String(format: "bus.throughput batch=%d events=%d publishers=%d publish=%.0f/s publish_to_consume=%.0f/s",
                         batchSize, total, publishers, Double(total) / publishSeconds, Double(total) / endToEndSeconds))
            _ = try? await client.send(["DEL", stream])
        }

        // Latency: one publisher at `rate`/s; the consumer measures publish → handler on the monotonic clock.
        let latencyStream = streams.events("latency")
        let latencies = Mutex<[Double]>([])
        let latencyConsumer = StreamConsumer(endpoint: endpoint, streams: streams, options: Self.options(latencyStream), logger: logger) { event in
            let now = DispatchTime.now().uptimeNanoseconds
            if case .number(let sent)? = event.data["sentAt"] {
                latencies.withLock { $0.append(Double(now - UInt64(sent)) / 1e6) }
            }
        }
        let count = rate * seconds
        try await withService(latencyConsumer, logger: logger) {
            let interval = Duration.nanoseconds(1_000_000_000 / rate)
            var next = ContinuousClock.now
            for _ in 0..<count {
                next += interval
                try await publisher.publish(Self.envelope(sentAt: DispatchTime.now().uptimeNanoseconds), to: latencyStream)
                try await Task.sleep(until: next, clock: .continuous)
            }
            while latencies.withLock({ $0.count }) < count { try await Task.sleep(for: .milliseconds(5)) }
        }
        let sorted = latencies.withLock { $0 }.sorted()
        func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
        print(String(format: "bus.latency rate=%d/s events=%d p50=%.3fms p99=%.3fms max=%.3fms",
                     rate, sorted.count, percentile(0.50), percentile(0.99), sorted.last ?? 0))
        _ = try? await client.send(["DEL", latencyStream])
        await client.shutdown()
    }

    static func options(_ stream: String) -> StreamConsumer.Options {
        var options = StreamConsumer.Options(stream: stream, group: "bench", consumer: "1")
        options.batchSize = 256
        options.block = .milliseconds(500)
        return options
    }

    static func envelope(sentAt: UInt64) -> EventEnvelope {
        EventEnvelope(type: "bench.published", occurredAt: Date(), producer: "bench", subject: nil,
                      data: .object(["sentAt": .number(Double(sentAt)), "pad": .string("lantern")]))
    }
}

/// Pairly end to end through a running stack (see `Realtime`).
struct RealtimeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "realtime", abstract: "upload → WebSocket latency and idle WebSocket memory")
    @Option(help: "gateway base URL") var gateway = "http://127.0.0.1:18080"
    @Option(help: "photo to upload") var image = "Tests/ImageSanitizerTests/Fixtures/with-exif.jpg"
    @Option(help: "uploads per second") var rate = 50
    @Option(help: "seconds of uploads") var seconds = 10
    @Option(help: "idle WebSocket connections to hold") var idle = 5_000
    @Option(help: "gateway process id (for its memory)") var gatewayPid: Int32 = 0

    func run() async throws {
        try await Realtime(gateway: gateway, image: image, rate: rate, seconds: seconds, idle: idle, gatewayPID: gatewayPid).run()
    }
}

/// Resident memory of running processes, from /proc.
struct Memory: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "resident memory (VmRSS) of processes by pid")
    @Argument(help: "name=pid pairs") var processes: [String]

    static func rss(pid: Int32) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return .nan }
        return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
    }

    func run() async throws {
        for entry in processes {
            let parts = entry.split(separator: "=")
            guard parts.count == 2, let status = try? String(contentsOfFile: "/proc/\(parts[1])/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else {
                print("memory.\(parts.first ?? "?") unavailable")
                continue
            }
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
            print(String(format: "memory.%@ rss=%.1fMB", String(parts[0]), kilobytes / 1024))
        }
    }
}

final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

