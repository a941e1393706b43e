import Foundation
import LanternRedis

/// A private `redis-server` a test can stop and start again, to prove nothing is lost while Redis is down.
public final class RedisServerProcess: @unchecked Sendable {
    public let port: Int
    private var process: Process?
    private let lock = NSLock()

    public init(port: Int = Int.random(in: 41_000...48_000)) { self.port = port }

    public var endpoint: RedisEndpoint { RedisEndpoint(host: "127.0.0.1", port: port) }
    public var url: String { "redis://127.0.0.1:\(port)/0" }

    public func start() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        lock.withLock { self.process = process }
        let client = RedisClient(endpoint: endpoint, size: 1, commandTimeout: .seconds(1))
        defer { Task { await client.shutdown() } }
        for _ in 0..<100 {
            if (try? await client.send("PING")) != nil { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw RedisError.connection("redis-server on port \(port) did not start")
    }

    /// Stops the server (`SHUTDOWN NOSAVE`) and waits until it no longer answers.
    ///
    /// `Process.waitUntilExit()` is avoided on purpose: on Linux it can block a cooperative thread indefinitely.
    public func stop() async {
        let client = RedisClient(endpoint: endpoint, size: 1, commandTimeout: .seconds(1))
        _ = try? await client.send("SHUTDOWN", "NOSAVE")
        for _ in 0..<100 {
            if (try? await client.send("PING")) == nil { break }
            try? await Task.sleep(for: .milliseconds(50))
        }
        await client.shutdown()
        // Children of a Foundation `Process` may have SIGTERM blocked; SIGKILL always ends a leftover.
        if let process = lock.withLock({ self.process }), process.isRunning { kill(process.processIdentifier, SIGKILL) }
        lock.withLock { self.process = nil }
    }

    deinit {
        if let process, process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
