import ArgumentParser
import DevIdentity
import Foundation
import Hummingbird
import LanternCore
import Logging
import NIOCore
import NIOPosix

/// `lantern-dev-identity`: the development identity provider (`DevIdentityProvider`), started by `make up`.
@main
struct DevIdentityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lantern-dev-identity",
        abstract: "Mints Google- and Apple-shaped ID tokens for made-up accounts, for the development stack only.")

    @Option(help: "address to listen on") var host = "127.0.0.1"
    @Option(help: "port to listen on") var port = 8089
    @Option(help: "PEM file of the signing key (made on first start)") var keyFile: String

    func run() async throws {
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        let provider = DevIdentityProvider(key: try DevIdentityProvider.key(file: URL(fileURLWithPath: keyFile)))
        var logger = Logger(label: "dev-identity")
        logger.logLevel = .notice
        // Only requests to its own names (localhost, 127.0.0.1, [::1], --host) and those of ALLOWED_HOSTS, as the
        // gateway of the development stack: no web page can reach it by DNS rebinding.
        let router = try provider.router(host: host, allowedHosts: Settings.environment().list("allowed.hosts"))
        let app = Application(router: router, configuration: .init(address: .hostname(host, port: port), serverName: "lantern-dev-identity"),
                              logger: logger)
        try await app.runService()
    }
}
