import Foundation
import LanternCore
import LanternLLM
import LanternRedis
import LanternTestSupport
import Testing

@Suite("the accounts' daily model calls (ModelCallBudget), counted in a real Redis")
struct ModelCallBudgetTests {
    @Test("a request counts once whatever its retries; a cached answer and a request without an account count nothing; past the budget the local grammar answers without a call; replicas share the count; a new UTC day starts afresh")
    func budget() async throws {
        let fake = FakeLLMServers()
        fake.script("m", .serverError(503), .ok())
        let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
        let prefix = TestEnvironment.uniquePrefix()
        let time = ManualTime(Date(timeIntervalSince1970: 1_800_000_000))
        try await withProviders(fake) { gemini, _ in
            func router() throws -> LLMRouter {
                var policy = RouterPolicy()
                policy.retryBackoff = .milliseconds(1)
                return LLMRouter(routes: [:], defaultRoute: [.model(provider: "gemini", model: "m"), .local], providers: [gemini],
                                 local: LocalGenerator(grammars: ["fortune": try fortuneGrammar()]), policy: policy,
                                 budget: ModelCallBudget(callsPerDay: 2, redis: redis, prefix: prefix, clock: .manual(time), logger: TestEnvironment.logger))
            }
            let (a, b) = (try router(), try router())  // two replicas
            func request(_ account: String?, day: String = "2026-11-23", cacheable: Bool = false) -> LLMRequest {
                var request = fortuneRequest(cacheable: cacheable, day: day)
                request.account = account
                return request
            }
            let retried = try await a.generate(request("u1", cacheable: true))
            #expect(!retried.source.isLocal && retried.attempts == 2, "a 503, then the answer: one request, one count")
            #expect(try await a.generate(request("u1", cacheable: true)).cached, "the cache answers and counts nothing")
            #expect(try await !b.generate(request(nil)).source.isLocal, "no account: not counted")
            #expect(try await !b.generate(request("u1")).source.isLocal, "the second call of the day, on the other replica")
            let calls = fake.received.count
            let spent = try await a.generate(request("u1"))
            #expect(spent.source.isLocal && spent.fallbacks.contains { $0.contains("model calls for today are spent") })
            #expect(fake.received.count == calls, "no call past the budget")
            #expect(try await !a.generate(request("u2")).source.isLocal, "each account its own")
            time.advance(by: 86_400)
            #expect(try await !b.generate(request("u1")).source.isLocal, "the next UTC day")
        }
        await redis.shutdown()
    }
}
