import Foundation
import LanternCore
import Synchronization
import Testing

@Suite("Retry-After and cached tokens")
struct RetryAfterTests {
    @Test("Retry-After as delta-seconds or an IMF-fixdate (RFC 9110 §10.2.3); retry-after-ms wins; anything else is no wait")
    func retryAfter() {
        #expect(RetryAfter.parse("120") == .seconds(120))
        #expect(RetryAfter.parse(" 1.5 ") == .milliseconds(1500))
        #expect(RetryAfter.parse(nil) == nil && RetryAfter.parse("soon") == nil && RetryAfter.parse("") == nil && RetryAfter.parse("-3") == nil)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        // 1_800_000_000 is Fri, 15 Jan 2027 08:00:00 GMT.
        #expect(RetryAfter.parse("Fri, 15 Jan 2027 08:00:30 GMT", now: now) == .seconds(30))
        #expect(RetryAfter.parse("Thu, 01 Jan 1970 00:00:00 GMT", now: now) == .zero)
        #expect(RetryAfter.parse("30", milliseconds: "250") == .milliseconds(250))
        #expect(RetryAfter.parse("30", milliseconds: "x") == .seconds(30))
        // A day at most: a server's typo must not park a client for years.
        #expect(RetryAfter.parse("99999999999") == .seconds(86_400))
    }

    @Test("a token is fetched once for concurrent callers, reused until a minute before it expires, and fetched again after an invalidation of it")
    func tokenCache() async throws {
        let time = ManualTime(Date(timeIntervalSince1970: 1_800_000_000))
        let fetches = Mutex(0)
        let cache = TokenCache(clock: .manual(time)) {
            let n = fetches.withLock { $0 += 1; return $0 }
            try await Task.sleep(for: .milliseconds(50))
            return ("token-\(n)", time.now.addingTimeInterval(3600))
        }
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<10 { group.addTask { try await cache.token() } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens == ["token-1"] && fetches.withLock { $0 } == 1)
        time.advance(by: 3600 - 61)
        #expect(try await cache.token() == "token-1")
        time.advance(by: 2)
        #expect(try await cache.token() == "token-2")
        // A late 401 for an old token keeps the current one; one for the current token drops it.
        await cache.invalidate("token-1")
        #expect(try await cache.token() == "token-2")
        await cache.invalidate("token-2")
        #expect(try await cache.token() == "token-3")
    }
}

@Suite("Problems people can read")
struct ReadableProblemTests {
    enum Provider: String, Decodable { case google, apple }
    struct Body: Decodable { var provider: Provider }

    @Test("a value an enum does not take is named in words, not in Foundation's debug description")
    func enumValue() throws {
        do {
            _ = try JSONDecoder().decode(Body.self, from: Data(#"{"provider":"facebook"}"#.utf8))
            Issue.record("decoded")
        } catch let error as DecodingError {
            let problem = Problem(decoding: error)
            #expect(problem.status == 422 && problem.errors?.first?.field == "provider")
            #expect(problem.errors?.first?.message == "is not one of the accepted values ('facebook')", "\(problem)")
            #expect(!(problem.detail ?? "").contains("Cannot initialize"))
        }
    }
}
