import LanternCore
import LanternHTTP
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Watches the service's PostgreSQL through a pool of its own (one connection), so the probe never queues behind
/// busy requests: `SELECT 1` every `interval`, bounded by `timeout`. A probe that fails is not enough to call the
/// database gone — on a loaded machine a probe can take seconds, and the pool backs off after a slow connect — so
/// the server's port decides: refused (a crash, a stopped server) is down at once; no answer at all for
/// `silentLimit` failed probes in a row is down too (a host gone from the network); a port that accepts means a
/// slow database, which requests wait for as usual. Up after one probe that succeeds. While down,
/// `OutageMiddleware` answers 503 `database_unavailable` at once, and requests already waiting for a connection
/// are answered too, instead of waiting for postgres-nio's pool to give up.
public final class DatabaseWatch: DependencyWatch, Service {
    private let client: PostgresClient
    private let interval: Duration
    private let timeout: Duration
    private let logger: Logger
    private let state = Mutex<(down: Bool, waiters: [UInt64: CheckedContinuation<Void, Never>], next: UInt64)>((false, [:], 0))

    public let outageProblem = Problem.dependencyUnavailable("The database", code: "database_unavailable")

    private let silentLimit: Int
    private let host: String?
    private let port: Int?

    public init(configuration: PostgresClient.Configuration, interval: Duration = .seconds(1), timeout: Duration = .seconds(2),
                silentLimit: Int = 3, logger: Logger) {
        self.silentLimit = silentLimit
        self.host = configuration.host
        self.port = configuration.port
        var configuration = configuration
        configuration.options.maximumConnections = 1
        configuration.options.minimumConnections = 0
        configuration.options.connectTimeout = timeout
        self.client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.interval = interval
        self.timeout = timeout
        self.logger = logger
    }

    public var isDown: Bool { state.withLock { $0.down } }

    public func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.client.run() }
            var silentProbes = 0
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                let client = self.client
                do {
                    try await withDeadline(self.timeout) { _ = try await client.query("SELECT 1") }
                    silentProbes = 0
                    self.record(healthy: true)
                } catch {
                    // Shutting down is not an outage.
                    if Task.isCancelled || Task.isShuttingDownGracefully { break }
                    switch await self.probePort() {
                    case .refuses:
                        silentProbes = 0
                        self.record(healthy: false)
                    case .silent:
                        silentProbes += 1
                        if silentProbes >= self.silentLimit { self.record(healthy: false) }
                    case .accepts:
                        silentProbes = 0
                    }
                }
                try? await Task.sleep(for: self.interval)
            }
            group.cancelAll()
        }
    }

    func record(healthy: Bool) {
        let (changed, waiters) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
            let changed = state.down == healthy
            state.down = !healthy
            guard !healthy else { return (changed, []) }
            let waiters = Array(state.waiters.values)
            state.waiters = [:]
            return (changed, waiters)
        }
        if changed {
            if healthy { logger.notice("database reachable again") } else { logger.error("database unreachable: answering 503 database_unavailable") }
        }
        for waiter in waiters { waiter.resume() }
    }

    /// A request met a closed or refused database connection: if the server's port refuses connections now, the
    /// database is gone — down at once rather than after the probe's next round (a pool waiting to reconnect).
    public func observe(_ error: any Error) async {
        guard !isDown, DependencyErrors.problem(for: error)?.code == DependencyErrors.database.code else { return }
        if await probePort() == .refuses { record(healthy: false) }
    }

    enum PortAnswer { case accepts, refuses, silent }

    /// What a TCP connection to the server's port gets within a second: accepted, refused (or the host
    /// unreachable), or no answer.
    func probePort() async -> PortAnswer {
        guard let host, let port else { return .accepts }
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(1)).connect(host: host, port: port).get()
            try? await channel.close()
            return .accepts
        } catch ChannelError.connectTimeout {
            return .silent
        } catch {
            return .refuses
        }
    }

    public func waitUntilDown() async {
        let id = state.withLock { state -> UInt64 in
            state.next += 1
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.down || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
