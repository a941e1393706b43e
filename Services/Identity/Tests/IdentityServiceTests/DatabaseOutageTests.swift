import Foundation
import HummingbirdTesting
import LanternCore
import LanternHTTP
import LanternTestSupport
import Synchronization
import Testing

// A time limit, so that a hang here is named in the output (the outbox relay once waited for ever on a COMMIT sent as
// the crash closed its connection).
@Suite("Database outage", .timeLimit(.minutes(3)))
struct DatabaseOutageTests {
    /// `GET /v1/me` within `seconds`, or nil. Alone this test sees the outage answered within about 3 s (it runs in
    /// 6 s); under the whole suite on 2 cores that moves, so the bound only rules out a hang, and the 503 problem
    /// (a 500 before) is what fails without the watch and the classifier.
    func me(_ h: IdentityHarness, _ token: String, within seconds: Int = 30) async throws -> TestResponse? {
        try? await withDeadline(.seconds(seconds)) { try await h.request(.get, "/v1/me", token: token) }
    }

    @Test("the database crashing mid-request: 503 database_unavailable with Retry-After, never a 500 or a hang; readiness says so; back when it is")
    func outage() async throws {
        let proxy = try DatabaseProxy(upstream: TestEnvironment.postgresAdminURL)
        try await proxy.start()
        let operations = try OperationsPort()
        try await IdentityHarness.run(extra: operations.variables, proxy: proxy) { h in
            let token = try await h.signInDevice().accessToken
            #expect(try await me(h, token)?.status == .ok)

            // A crash while a request is on its way: whether its query meets the closed connection, waits for a new
            // one, or comes after the watch noticed, the answer is the outage. A query sent just as its connection
            // closes can stay unanswered for ever inside postgres-nio 1.33.2 (the fix, vapor/postgres-nio#487, was
            // reverted in #501); `OutageBackstop` answers that request too (about once in three runs of the suite).
            async let inFlight = me(h, token)
            await proxy.crash()
            let crashed = try #require(try await inFlight, "a request in flight when the database crashed got no answer")
            #expect(crashed.status.code == 503 || crashed.status == .ok, "\(crashed.status)")
            let after = try #require(try await me(h, token), "a request after the crash got no answer")
            after.expectProblem(503, "database_unavailable")
            #expect(after.headers[.retryAfter] == "5")
            let readiness = try await operations.get("/health/ready")
            #expect(readiness.status == 503 && readiness.body.contains("postgres"), "\(readiness)")

            // Back once the database is, as soon as postgres-nio's pools reconnect (their back-off decides; a minute
            // is far more than it takes).
            try await proxy.restore()
            let back = try await eventually(timeout: .seconds(60)) { try await me(h, token, within: 5)?.status == .ok }
            #expect(back, "back once the database is")

        }
        await proxy.stop()
    }

    @Test("a query that is never answered (open connections silent, new ones refused): 503 database_unavailable all the same; back after the server restarts; the service stops on time")
    func unansweredQuery() async throws {
        let proxy = try DatabaseProxy(upstream: TestEnvironment.postgresAdminURL)
        try await proxy.start()
        let bodyEnded = Mutex<ContinuousClock.Instant?>(nil)
        try await IdentityHarness.run(proxy: proxy) { h in
            let token = try await h.signInDevice().accessToken
            #expect(try await me(h, token)?.status == .ok)
            // The request's query goes out on a connection that never answers, and postgres-nio does not give it up
            // when cancelled: the router's own race cannot end. The watch finds the port refusing, and the backstop
            // answers.
            await proxy.partition()
            let answer = try #require(try await me(h, token), "a request whose query is never answered got no answer")
            answer.expectProblem(503, "database_unavailable")
            #expect(answer.headers[.retryAfter] == "5")
            // The server restarts: the silent connections are reset (what a rebooted host answers to a retransmission).
            await proxy.crash()
            try await proxy.restore()
            let back = try await eventually(timeout: .seconds(60)) { try await me(h, token, within: 5)?.status == .ok }
            #expect(back, "back once the database is")
            bodyEnded.withLock { $0 = .now }
        }
        // The request left behind holds up nothing: the process stops as it would without it.
        let stop = try #require(bodyEnded.withLock { $0 }).duration(to: .now)
        #expect(stop < .seconds(20), "stopping took \(stop)")
        await proxy.stop()
    }
}
