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
    print("gateway: \(error)")
    exit(78)  // EX_CONFIG
}
