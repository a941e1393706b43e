import GatewayService
import LanternHTTP

// gateway: the only public entry. Configuration: docs/configuration.md.
await ServiceMain.run("gateway", GatewayConfiguration.self) { try await buildGatewayApplication($0) }
