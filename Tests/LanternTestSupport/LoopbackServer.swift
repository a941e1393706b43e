import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// Runs a Hummingbird router on 127.0.0.1 with a free port while `body` runs (fake third parties, test upstreams).
public enum LoopbackServer {
    public static func run<T: Sendable, Context: RequestContext>(
        router: Router<Context>, _ body: @Sendable (Int) async throws -> T
    ) async throws -> T where Context.Source == ApplicationRequestContextSource {
        let (ports, port) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "loopback")
        logger.logLevel = .warning
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in port.yield(channel.localAddress?.port ?? 0) },
                              logger: logger)
        return try await withService(app) {
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }
            return try await body(port)
        }
    }
}
