import Foundation
import Hummingbird
import HummingbirdTesting
import LanternCore
@testable import LanternHTTP
import LanternTestSupport
import Synchronization
import Testing

/// A dependency the test takes down by hand.
private final class SwitchWatch: DependencyWatch {
    private let down = Mutex(false)
    var isDown: Bool { down.withLock { $0 } }
    var outageProblem: Problem { .dependencyUnavailable("The database", code: "database_unavailable") }
    func goDown() { down.withLock { $0 = true } }

    func waitUntilDown() async {
        while !isDown, !Task.isCancelled { try? await Task.sleep(for: .milliseconds(10)) }
    }

    func observe(_ error: any Error) async {}
}

/// The shared router with a handler stuck on a client that never answers nor gives up, and one that waits in a
/// cancellable way (a connection request postgres-nio gives up when cancelled), behind the backstop.
private func application(_ watch: SwitchWatch, stuck: StuckCalls, grace: Duration) -> some ApplicationProtocol {
    let router = ServiceRouter.make(watches: [watch])
    router.get("/stuck") { _, _ -> String in
        await stuck.wait()
        return "late"
    }
    router.get("/waiting") { _, _ -> String in
        try await Task.sleep(for: .seconds(3600))
        return "late"
    }
    router.get("/ok") { _, context in context.requestID }
    let backstop = OutageBackstop(router.buildResponder(), watches: [watch], grace: grace)
    return Application(responder: backstop, services: [backstop.watcher], logger: TestEnvironment.logger)
}

private func expectOutage(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(response.status == .serviceUnavailable && response.headers[.contentType] == "application/problem+json", sourceLocation: sourceLocation)
    let problem = try JSONDecoder().decode(Problem.self, from: Data(response.body.readableBytesView))
    #expect(problem.code == "database_unavailable", sourceLocation: sourceLocation)
}

@Suite("LanternHTTP: the outage backstop answers a request stuck in a client that ignores the outage")
struct OutageBackstopTests {
    @Test("a handler stuck for ever when the database goes down: 503 database_unavailable with Retry-After and the caller's request id, within the grace")
    func stuckHandler() async throws {
        let (watch, stuck) = (SwitchWatch(), StuckCalls())
        try await application(watch, stuck: stuck, grace: .milliseconds(200)).test(.live) { client in
            async let answer = withDeadline(.seconds(20)) {
                try await client.execute(uri: "/stuck", method: .get, headers: [.requestID: "req-stuck-1"])
            }
            #expect(try await eventually { stuck.count == 1 }, "the handler started")
            watch.goDown()
            // Without the backstop this waits for ever: the handler is cancelled, and ignores it.
            let response = try await answer
            try expectOutage(response)
            #expect(response.headers[.retryAfter] == "5")
            #expect(response.headers[.requestID] == "req-stuck-1")
            stuck.release()
        }
    }

    @Test("a handler that gives up when cancelled is answered by the router itself (its own request id); an answer while up passes through untouched")
    func routerAnswersFirst() async throws {
        let (watch, stuck) = (SwitchWatch(), StuckCalls())
        try await application(watch, stuck: stuck, grace: .seconds(30)).test(.live) { client in
            let ok = try await client.execute(uri: "/ok", method: .get, headers: [.requestID: "req-ok-1"])
            #expect(ok.status == .ok && String(buffer: ok.body) == "req-ok-1" && ok.headers[.requestID] == "req-ok-1")

            async let answer = withDeadline(.seconds(20)) { try await client.execute(uri: "/waiting", method: .get) }
            try await Task.sleep(for: .milliseconds(200))
            watch.goDown()
            // Well inside the 30 s grace: the middleware's 503, with the id the router gave the request.
            let response = try await answer
            try expectOutage(response)
            #expect(response.headers[.requestID]?.isEmpty == false)
        }
    }

    @Test("a request listed but not yet started when the outage is seen is cancelled as its task starts; one started before is cancelled at once")
    func listedBeforeStarted() async throws {
        let requests = InFlightRequests()
        let request = Request(head: .init(method: .get, scheme: "http", authority: "localhost", path: "/late"), body: .init(buffer: ByteBuffer()))
        let early = requests.add(answer: FirstAnswer(), request: request, logger: TestEnvironment.logger)
        let running = Task<Void, Never> { try? await Task.sleep(for: .seconds(3600)) }
        requests.attach(running, to: early)
        let late = requests.add(answer: FirstAnswer(), request: request, logger: TestEnvironment.logger)
        #expect(requests.cancelAll().count == 2)
        #expect(running.isCancelled)
        let starting = Task<Void, Never> { try? await Task.sleep(for: .seconds(3600)) }
        requests.attach(starting, to: late)
        #expect(starting.isCancelled)
        requests.remove(early)
        requests.remove(late)
        #expect(requests.cancelAll().isEmpty)
    }
}
