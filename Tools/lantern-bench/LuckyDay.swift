import ArgumentParser
import AsyncHTTPClient
import Foundation
import LanternCore
import LanternLLM
import LanternTestSupport
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Lucky Day through the running stack: `setup` signs users in and gives them profiles; `break` breaks each
/// one's cookie once with N requests in flight and reports latency percentiles and how many were artisanal.
struct LuckyDayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "luckyday", abstract: "Lucky Day: profiles, then breaking cookies",
                                                    subcommands: [Setup.self, Break.self])

    struct Setup: AsyncParsableCommand {
        @Option(help: "gateway base URL") var gateway = "http://127.0.0.1:18080"
        @Option(help: "users to create") var users = 2000
        @Option(help: "requests in flight") var concurrency = 32
        @Option(help: "where to write the users' access tokens, one per line") var tokens: String

        func run() async throws {
            let gateway = self.gateway
            let made = try await forEach(0..<users, concurrency: concurrency) { index -> String in
                let (status, data) = try await call(gateway, .POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"luckyday"}"#)
                guard status == 201, let token = field(data, "accessToken") else { throw BenchError("sign-in: \(status)") }
                // Births spread over the years and the hours, at one gazetteer place (Kyiv).
                let date = String(format: "%04d-%02d-%02d", 1950 + index % 60, 1 + index % 12, 1 + index % 28)
                // Daytime hours: a night birth can fall in a DST gap, which astrology rightly refuses.
                let time = String(format: "%02d:%02d", 6 + index % 16, (index * 7) % 60)
                let (saved, body) = try await call(gateway, .PUT, "/v1/fortunes/profile", token: token,
                                                   json: #"{"birth":{"date":"\#(date)","time":"\#(time)","place":{"id":703448}},"timeZone":"Europe/Rome"}"#)
                guard saved == 200 else { throw BenchError("profile: \(saved) \(String(decoding: body, as: UTF8.self))") }
                return token
            }
            try made.values.joined(separator: "\n").write(toFile: tokens, atomically: true, encoding: .utf8)
            print(String(format: "luckyday.setup users=%d profiles/s=%.0f", made.values.count, Double(made.values.count) / made.seconds))
        }
    }

    struct Break: AsyncParsableCommand {
        @Option(help: "base URL (the gateway, or content itself)") var url = "http://127.0.0.1:18080"
        @Option(help: "the users' access tokens, one per line") var tokens: String
        @Option(help: "requests in flight") var concurrency = 64
        @Option(help: "name of this run in the output") var name = "break"

        func run() async throws {
            let list = try String(contentsOfFile: tokens, encoding: .utf8).split(separator: "\n").map(String.init)
            let url = self.url
            let results = try await forEach(list.indices, concurrency: concurrency) { index -> (Double, Bool, Int) in
                let started = ContinuousClock.now
                let (status, data) = try await call(url, .POST, "/v1/fortunes/today/break", token: list[index])
                let elapsed = (ContinuousClock.now - started).inSeconds * 1000
                let artisanal = ((try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["fortune"] as? [String: Any])?["artisanal"] as? Bool
                return (elapsed, artisanal ?? false, status)
            }
            let latencies = results.values.map(\.0).sorted()
            func percentile(_ p: Double) -> Double { latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
            let ok = results.values.filter { $0.2 == 200 }.count
            let artisanal = results.values.filter(\.1).count
            print(String(format: "luckyday.%@ requests=%d ok=%d artisanal=%d rps=%.0f p50=%.2fms p95=%.2fms p99=%.2fms max=%.2fms",
                         name, latencies.count, ok, artisanal, Double(latencies.count) / results.seconds, percentile(0.5), percentile(0.95),
                         percentile(0.99), latencies.last ?? .nan))
        }
    }
}

/// The LLM layer in process: the local generator over Lucky Day's real catalogue, and what the router adds over a
/// provider that answers at once (guards, health, concurrency slot, metrics).
struct LLMCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "llm", abstract: "local generator and router overhead, in process")
    @Option(help: "Lucky Day's catalogue") var catalogue = "Services/Content/Sources/LuckyDay/Catalogue/luckyday.json"
    @Option(help: "iterations") var iterations = 20000

    /// A provider that answers at once with a fixed fortune: the floor the router's overhead is measured on.
    struct Instant: LLMProvider {
        let name = "instant"
        func generate(_ request: LLMRequest, model: String, timeout: Duration) async throws -> ProviderAnswer {
            ProviderAnswer(text: "A quiet wind carries your patience further than haste ever could.")
        }
    }

    func run() async throws {
        let grammars = try JSONDecoder().decode([String: Grammar].self, from: Data(contentsOf: URL(fileURLWithPath: catalogue)))
        let local = LocalGenerator(grammars: grammars)
        func request(_ i: Int) -> LLMRequest {
            var request = LLMRequest(task: "fortune", system: "You write one fortune-cookie message.", instruction: "Write today's fortune.",
                                     descriptors: [Descriptor("animal", "Chinese zodiac animal", "Horse"), Descriptor("yearElement", "Element", "Metal"),
                                                   Descriptor("dayMaster", "Day master", "Yang Metal"), Descriptor("nickname", "Nickname", "Quiet Metal Horse"),
                                                   Descriptor("dominantElement", "Strongest", "Metal"), Descriptor("weakElement", "Weakest", "Wood"),
                                                   Descriptor("dayElement", "Element of today", "Water"), Descriptor("weekday", "Weekday", "Monday")],
                                     rules: OutputRules(maxCharacters: 200, language: .english),
                                     seed: GenerationSeed("luckyday", "user-\(i % 1000)", "day-\(i)", "v1"), budget: .seconds(5))
            request.pinned = ["core": i]
            return request
        }
        var samples: [Double] = []
        samples.reserveCapacity(iterations)
        for i in 0..<iterations {
            let started = ContinuousClock.now
            _ = try local.generate(request(i))
            samples.append((ContinuousClock.now - started).inSeconds * 1e6)
        }
        report("llm.local-generator", samples)

        let provider = Instant()
        let router = LLMRouter(routes: [:], defaultRoute: [.model(provider: "instant", model: "m"), .local], providers: [provider], local: local)
        var direct: [Double] = [], routed: [Double] = []
        for i in 0..<iterations {
            let req = request(i)
            var started = ContinuousClock.now
            _ = try await provider.generate(req, model: "m", timeout: .seconds(5))
            direct.append((ContinuousClock.now - started).inSeconds * 1e6)
            started = ContinuousClock.now
            _ = try await router.generate(req)
            routed.append((ContinuousClock.now - started).inSeconds * 1e6)
        }
        report("llm.provider-direct", direct)
        report("llm.router", routed)
        let overhead = median(routed) - median(direct)
        print(String(format: "llm.router-overhead p50=%.1fus", overhead))
    }

    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    func report(_ name: String, _ values: [Double]) {
        let sorted = values.sorted()
        func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
        print(String(format: "%@ n=%d p50=%.1fus p99=%.1fus", name, sorted.count, percentile(0.5), percentile(0.99)))
    }
}

/// Fake LLM servers (Gemini and OpenAI-compatible wire formats) whose every model answers after `delay`, for a
/// stack under test; writes its port to `--port-file` and serves until stopped.
struct FakeLLMCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "fake-llm", abstract: "slow fake Gemini / OpenAI-compatible servers")
    @Option(help: "seconds before every answer") var delay: Double = 8
    @Option(help: "file to write the port to") var portFile: String

    func run() async throws {
        let fake = FakeLLMServers(defaultBehaviour: .slow(.milliseconds(Int64(delay * 1000))))
        let portFile = self.portFile
        try await fake.run { geminiURL, _ in
            try (geminiURL.split(separator: ":").last.map(String.init) ?? "").write(toFile: portFile, atomically: true, encoding: .utf8)
            while true { try await Task.sleep(for: .seconds(3600)) }
        }
    }
}

// MARK: Helpers

/// One connection per request in flight, as wrk keeps them: the shared client allows 8 per host, and requests
/// beyond those would wait in the client and be counted as the server's latency.
let benchClient: HTTPClient = {
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 256)
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
}()

@Sendable func call(_ base: String, _ method: HTTPMethod, _ path: String, token: String? = nil, json: String? = nil) async throws -> (Int, Data) {
    var request = HTTPClientRequest(url: base + path)
    request.method = method
    if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
    if let json { request.headers.add(name: "Content-Type", value: "application/json"); request.body = .bytes(ByteBuffer(string: json)) }
    let response = try await benchClient.execute(request, timeout: .seconds(60))
    return (Int(response.status.code), Data(buffer: try await response.body.collect(upTo: 1 << 20)))
}

@Sendable func field(_ data: Data, _ name: String) -> String? { (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?[name] as? String }

/// Runs `body` for every item with at most `concurrency` in flight; returns the results and the wall time.
func forEach<Items: Collection, T: Sendable>(_ items: Items, concurrency: Int, _ body: @escaping @Sendable (Items.Element) async throws -> T)
    async throws -> (values: [T], seconds: Double) where Items.Element: Sendable {
    let started = ContinuousClock.now
    var values: [T] = []
    try await withThrowingTaskGroup(of: T.self) { group in
        var iterator = items.makeIterator()
        for _ in 0..<concurrency { if let item = iterator.next() { group.addTask { try await body(item) } } }
        while let value = try await group.next() {
            values.append(value)
            if let item = iterator.next() { group.addTask { try await body(item) } }
        }
    }
    return (values, (ContinuousClock.now - started).inSeconds)
}
