import LanternCore
import LanternHTTP
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Watches the service's PostgreSQL through a pool of its own (one connection), so the probe never queues behind
/// busy requests: `SELECT 1` every `interval`, bounded by `timeout`. Down after one failed probe, up after one that
/// succeeds. While down, `OutageMiddleware` answers 503 `database_unavailable` at once, and requests already
/// waiting for a connection are answered too, instead of waiting for postgres-nio's pool to give up (15 s).
public final class DatabaseWatch: DependencyWatch, Service {
    private let client: PostgresClient
    private let interval: Duration
    private let timeout: Duration
    private let logger: Logger
    private let state = Mutex<(down: Bool, waiters: [UInt64: CheckedContinuation<Void, Never>], next: UInt64)>((false, [:], 0))

    public let outageProblem = Problem.dependencyUnavailable("The database", code: "database_unavailable")

    public init(configuration: PostgresClient.Configuration, interval: Duration = .seconds(1), timeout: Duration = .seconds(1), logger: Logger) {
        var configuration = configuration
        configuration.options.maximumConnections = 1
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
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                let client = self.client
                let healthy = (try? await withTimeout(self.timeout) { _ = try await client.query("SELECT 1") }) != nil
                self.record(healthy: healthy)
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
