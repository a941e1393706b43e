import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// Runs a Hummingbird router on 127.0.0.1 with a free port while `body` runs (fake third parties, test upstreams).
public enum LoopbackServer {
    public static func run<T: Sendable, Context: RequestContext>(
        router: Router<Context>, _ body: @Sendable (Int) async throws -> T
    ) async throws -> T where Context.Source == ApplicationRequestContextSource {
        let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "loopback")
        logger.logLevel = .warning
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) },
                              logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            let serviceGroup = ServiceGroup(configuration: .init(services: [app], logger: logger))
            group.addTask { try await serviceGroup.run() }
            var iterator = portStream.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }
            do {
                let result = try await body(port)
                await serviceGroup.triggerGracefulShutdown()
                try await group.waitForAll()
                return result
            } catch {
                await serviceGroup.triggerGracefulShutdown()
                try? await group.waitForAll()
                throw error
            }
        }
    }
}
