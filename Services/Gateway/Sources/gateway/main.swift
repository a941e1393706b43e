import GatewayService
import LanternHTTP

// gateway: the only public entry. Configuration: docs/configuration.md.
await ServiceMain.run("gateway") { try await buildGatewayApplication(GatewayConfiguration(settings: $0)) }
