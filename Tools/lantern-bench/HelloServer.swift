import ArgumentParser
import Hummingbird
import NIOCore
import NIOPosix

/// The floor of a Hummingbird server on this machine: the same server stack as every Lantern service, one route
/// answering a fixed body, no middleware, no upstream. `make bench` counts its instructions per request next to the
/// gateway's and nginx's (docs/benchmarks.md).
struct HelloServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "hello-server", abstract: "a bare Hummingbird server (instruction floor)")
    @Option(help: "port to listen on") var port = 18086

    func run() async throws {
        // As ServiceMain does for the services: Swift concurrency on NIO's event loops.
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        let router = Router()
        let body = ByteBuffer(string: #"{"id":"00000000-0000-0000-0000-000000000000","app":"luckyday"}"#)
        router.get("/v1/me") { _, _ in Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: body)) }
        router.get("/health/live") { _, _ in "ok" }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
        try await app.runService()
    }
}
