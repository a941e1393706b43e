import Foundation
import Synchronization
import LanternRedis

/// A private `redis-server` a test can stop and start again, to prove nothing is lost while Redis is down.
public final class RedisServerProcess: @unchecked Sendable {
    public let port: Int
    private var process: Process?
    private let lock = NSLock()

    public init(port: Int? = nil) { self.port = port ?? ((try? freePort()) ?? 31_999) }

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

private let handedOutPorts = Mutex<Set<Int>>([])

/// A TCP port nobody listens on, below Linux's ephemeral range (32768+) so outgoing connections cannot take it,
/// and never one handed out before in this process: tests running at once (each end-to-end stack takes a dozen
/// ports before its processes bind them) must not be given the same one.
public func freePort() throws -> Int {
    for _ in 0..<100 {
        let port = Int.random(in: 10_000..<32_000)
        guard handedOutPorts.withLock({ $0.insert(port).inserted }) else { continue }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { continue }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr = in_addr(s_addr: inet_addr("127.0.0.1"))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if bound == 0 { return port }
    }
    throw RedisError.connection("no free TCP port found on 127.0.0.1")
}

