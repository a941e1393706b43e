import Foundation
import GatewayService
import Hummingbird
import LanternCore

// gateway: the only public entry. Configuration: docs/configuration.md.
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
