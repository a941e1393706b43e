import Foundation
import LanternCore
import LanternRedis
import LanternTestSupport
import NIOCore
import NIOPosix
import Testing

/// Runs `body` with a client of the test Redis, shut down afterwards.
private func withClient<T>(size: Int = 1, _ body: (RedisClient) async throws -> T) async throws -> T {
    let client = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: size)
    do {
        let result = try await body(client)
        await client.shutdown()
        return result
    } catch {
        await client.shutdown()
        throw error
    }
}

private func bytes(_ text: String) -> RedisValue { .bulk(Array(text.utf8)) }

@Suite("LanternRedis: RedisClient against the test Redis")
struct RedisClientTests {
    /// Keys of one test start with their own prefix and expire, so runs never meet.
    let prefix = TestEnvironment.uniquePrefix()

    @Test("SET, GET, INCR and LRANGE answer status, bulk, integer, array and null replies that decode as such")
    func replies() async throws {
        try await withClient { redis in
            let key = "\(prefix):counter"
            #expect(try await redis.send("SET", key, "41", "EX", "60") == .status("OK"))
            let value = try await redis.send("GET", key)
            #expect(value == bytes("41"))
            #expect(value.string == "41")
            #expect(value.int == 41)
            #expect(try await redis.send("INCR", key) == .integer(42))
            #expect(try await redis.send(["GET", key]).int == 42)

            let missing = try await redis.send("GET", "\(prefix):missing")
            #expect(missing == .null)
            #expect(missing.isNull)
            #expect(missing.string == nil)

            let list = "\(prefix):list"
            #expect(try await redis.send("RPUSH", list, "a", "b", "c") == .integer(3))
            _ = try await redis.send("EXPIRE", list, "60")
            let range = try await redis.send("LRANGE", list, "0", "-1")
            #expect(range == .array([bytes("a"), bytes("b"), bytes("c")]))
            #expect(range.array?.compactMap(\.string) == ["a", "b", "c"])
            #expect(try await redis.send("LRANGE", "\(prefix):nolist", "0", "-1") == .array([]))
        }
    }

    @Test("an error reply is thrown as RedisError.server with Redis's message, and the connection stays usable")
    func errorReply() async throws {
        try await withClient { redis in
            let key = "\(prefix):text"
            try await redis.send("SET", key, "not a number", "EX", "60")
            do {
                try await redis.send("INCR", key)
                Issue.record("INCR on a non-number succeeded")
            } catch let error as RedisError {
                guard case .server(let message) = error else { Issue.record("expected .server, got \(error)"); return }
                #expect(message.contains("not an integer"))
                #expect(!error.isConnectionError)
            }
            do {
                try await redis.send("NOSUCHCOMMAND", "x")
                Issue.record("an unknown command succeeded")
            } catch let error as RedisError {
                guard case .server(let message) = error else { Issue.record("expected .server, got \(error)"); return }
                #expect(message.lowercased().contains("unknown command"))
            }
            #expect(try await redis.send("PING") == .status("PONG"))
        }
    }

    @Test("pipeline returns one result per command in order, a failing command's error in its own slot")
    func pipeline() async throws {
        try await withClient { redis in
            let counter = "\(prefix):p", text = "\(prefix):t"
            let results = try await redis.pipeline([
                ["SET", counter, "1", "EX", "60"],
                ["SET", text, "abc", "EX", "60"],
                ["INCR", counter],
                ["INCR", text],
                ["GET", counter],
                ["GET", "\(prefix):absent"],
                ["NOSUCHCOMMAND"],
                ["INCRBY", counter, "10"],
            ])
            #expect(results.count == 8)
            #expect(try results[0].get() == .status("OK"))
            #expect(try results[1].get() == .status("OK"))
            #expect(try results[2].get() == .integer(2))
            guard case .failure(.server(let message)) = results[3] else { Issue.record("slot 3: \(results[3])"); return }
            #expect(message.contains("not an integer"))
            #expect(try results[4].get() == bytes("2"))
            #expect(try results[5].get() == .null)
            guard case .failure(.server) = results[6] else { Issue.record("slot 6: \(results[6])"); return }
            #expect(try results[7].get() == .integer(12))
            #expect(try await redis.pipeline([]).isEmpty)
        }
    }

    @Test("values are binary-safe: NUL and 0xFF bytes survive a round trip")
    func binarySafe() async throws {
        try await withClient { redis in
            let key = "\(prefix):nul"
            let withNUL = "a\u{0}b\u{0}\u{0}c"
            try await redis.send("SET", key, withNUL, "EX", "60")
            #expect(try await redis.send("STRLEN", key) == .integer(6))
            #expect(try await redis.send("GET", key) == .bulk([0x61, 0x00, 0x62, 0x00, 0x00, 0x63]))
            #expect(try await redis.send("GET", key).string == withNUL)

            // The API sends Strings (UTF-8), so raw 0xFF is written server-side; replies carry it untouched.
            let raw = "\(prefix):raw"
            try await redis.send("BITFIELD", raw, "SET", "u8", "#0", "255", "SET", "u8", "#1", "0", "SET", "u8", "#2", "255")
            _ = try await redis.send("EXPIRE", raw, "60")
            #expect(try await redis.send("GET", raw) == .bulk([0xFF, 0x00, 0xFF]))
            let piped = try await redis.pipeline([["GET", raw]])
            #expect(try piped.first?.get() == .bulk([0xFF, 0x00, 0xFF]))
            #expect(try await redis.send("GETRANGE", raw, "1", "2") == .bulk([0x00, 0xFF]))
        }
    }

    @Test("after its connection is killed the client fails at most one command, with a connection error, and then reconnects")
    func reconnects() async throws {
        try await withClient { redis in
            try await withClient { admin in
                let firstID = try await redis.send("CLIENT", "ID")
                let before = try #require(firstID.int)
                // Only this connection: `CLIENT KILL TYPE normal` would also cut tests running in parallel.
                #expect(try await admin.send("CLIENT", "KILL", "ID", String(before)) == .integer(1))

                var failures: [RedisError] = []
                var after: Int?
                for _ in 0..<2 where after == nil {
                    do {
                        after = try await redis.send("CLIENT", "ID").int
                    } catch let error as RedisError {
                        failures.append(error)
                    }
                }
                #expect(failures.count <= 1)
                let allConnectionErrors = failures.allSatisfy { $0.isConnectionError }
                #expect(allConnectionErrors, "\(failures)")
                let reconnected = try #require(after)
                #expect(reconnected != before)
                #expect(try await redis.send("PING") == .status("PONG"))
            }
        }
    }

    @Test("an unreachable Redis is a connection error naming host and port")
    func unreachable() async throws {
        let redis = RedisClient(endpoint: RedisEndpoint(host: "127.0.0.1", port: 1), size: 1, connectTimeout: .seconds(1))
        do {
            try await redis.send("PING")
            Issue.record("PING to port 1 succeeded")
        } catch let error as RedisError {
            #expect(error.isConnectionError)
            #expect(error.description.contains("127.0.0.1:1"))
        }
        await redis.shutdown()
    }

    @Test("RedisEndpoint reads redis:// URLs and rejects others with a ConfigurationError naming REDIS_URL")
    func endpointURL() throws {
        let endpoint = try RedisEndpoint(url: "redis://:s%40cret@cache.internal:6380/3")
        #expect(endpoint == RedisEndpoint(host: "cache.internal", port: 6380, password: "s@cret", database: 3))
        #expect(try RedisEndpoint(url: "redis://localhost") == RedisEndpoint(host: "localhost", port: 6379, password: nil, database: 0))
        #expect(try RedisEndpoint(url: "redis://content:p%2Fw@redis:6379/0") == RedisEndpoint(host: "redis", port: 6379, user: "content", password: "p/w"))
        for bad in ["http://localhost:6379", "redis://localhost/zero", "not a url", "redis:///0", "redis://content@redis:6379/0"] {
            let error = #expect(throws: ConfigurationError.self, "\(bad)") { try RedisEndpoint(url: bad) }
            #expect(error?.variable == "REDIS_URL")
        }
    }

    @Test("CoalescedGet: 300 reads at once each get their own key's value; a key set after a read was answered is seen by the next read")
    func coalescedReads() async throws {
        try await withClient(size: 2) { redis in
            for index in stride(from: 0, to: 300, by: 3) {
                try await redis.send("SET", "\(prefix):mark:\(index)", "v\(index)", "EX", "60")
            }
            let reads = CoalescedGet(redis: redis, batch: 16)
            let answers = try await withThrowingTaskGroup(of: (Int, RedisValue).self) { group in
                for index in 0..<300 { group.addTask { (index, try await reads.get("\(prefix):mark:\(index)")) } }
                var answers: [Int: RedisValue] = [:]
                for try await (index, value) in group { answers[index] = value }
                return answers
            }
            #expect(answers.count == 300)
            for index in 0..<300 {
                #expect(answers[index] == (index % 3 == 0 ? bytes("v\(index)") : .null), "key \(index)")
            }
            #expect(try await reads.get("\(prefix):late") == .null)
            try await redis.send("SET", "\(prefix):late", "1", "EX", "60")
            #expect(try await reads.get("\(prefix):late") == bytes("1"))
        }
    }

    @Test("the event-loop lane: 400 commands at once on every loop each get their own reply; an error reply fails only its command; a killed connection fails what was out, then is made again; a dead port fails at once")
    func loopLane() async throws {
        try await withClient { redis in
            let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
            for index in 0..<40 { try await redis.send("SET", "\(prefix):lane:\(index)", "v\(index)", "EX", "60") }
            let futures = (0..<400).map { index in
                redis.send(["GET", "\(prefix):lane:\(index % 50)"], on: loops[index % loops.count])
            }
            for (index, future) in futures.enumerated() {
                #expect(try await future.get() == (index % 50 < 40 ? bytes("v\(index % 50)") : .null), "command \(index)")
            }
            let loop = loops[0]
            try await redis.send("SET", "\(prefix):lane:text", "not a number", "EX", "60")
            await #expect(throws: RedisError.self) { try await redis.send(["INCR", "\(prefix):lane:text"], on: loop).get() }
            #expect(try await redis.send(["GET", "\(prefix):lane:0"], on: loop).get() == bytes("v0"), "the connection goes on after an error reply")

            // The lane's connection on that loop, killed from another client: what was out fails as a connection
            // error; the next command makes a new connection.
            let id = try #require(try await redis.send(["CLIENT", "ID"], on: loop).get().int)
            try await withClient { admin in _ = try await admin.send("CLIENT", "KILL", "ID", String(id)) }
            var after: Int?
            for _ in 0..<3 where after == nil {
                do { after = try await redis.send(["CLIENT", "ID"], on: loop).get().int } catch let error as RedisError {
                    #expect(error.isConnectionError, "\(error)")
                }
            }
            #expect(try #require(after) != id)
        }
        let dead = RedisClient(endpoint: RedisEndpoint(host: "127.0.0.1", port: 1), size: 1, connectTimeout: .seconds(1))
        do {
            _ = try await dead.send(["PING"], on: MultiThreadedEventLoopGroup.singleton.next()).get()
            Issue.record("PING to port 1 succeeded")
        } catch let error as RedisError {
            #expect(error.isConnectionError)
            #expect(error.description.contains("127.0.0.1:1"))
        }
        await dead.shutdown()
    }
}
