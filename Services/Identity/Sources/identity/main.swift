import Foundation
import Hummingbird
import IdentityService
import LanternCore
import NIOCore
import NIOPosix

// identity: accounts, sessions, devices. Configuration: docs/configuration.md.
// Run Swift concurrency on NIO's event loops: handlers, postgres-nio and the HTTP server then share threads
// instead of hopping between two pools on every request (the process never blocks these threads).
_ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()

do {
    let configuration = try IdentityConfiguration(settings: .environment())
    let app = try await buildIdentityApplication(configuration)
    try await app.runService()
} catch let error as ConfigurationError {
    FileHandle.standardError.write(Data("identity: \(error)\n".utf8))
    exit(78)  // EX_CONFIG
} catch {
    FileHandle.standardError.write(Data("identity: stopped: \(error)\n".utf8))
    exit(1)
}
