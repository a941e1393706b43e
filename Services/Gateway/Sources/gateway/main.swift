import Foundation
import GatewayService
import Hummingbird
import LanternCore
import NIOCore
import NIOPosix

// gateway: the only public entry. Configuration: docs/configuration.md.
// Run Swift concurrency on NIO's event loops: handlers, postgres-nio and the HTTP server then share threads
// instead of hopping between two pools on every request (the process never blocks these threads).
_ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()

do {
    let configuration = try GatewayConfiguration(settings: .environment())
    let app = try await buildGatewayApplication(configuration)
    try await app.runService()
} catch let error as ConfigurationError {
    FileHandle.standardError.write(Data("gateway: \(error)\n".utf8))
    exit(78)  // EX_CONFIG
} catch {
    FileHandle.standardError.write(Data("gateway: stopped: \(error)\n".utf8))
    exit(1)
}
