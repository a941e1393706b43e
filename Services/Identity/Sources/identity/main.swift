import IdentityService
import LanternHTTP

// identity: accounts, sessions, devices. Configuration: docs/configuration.md.
await ServiceMain.run("identity", IdentityConfiguration.self) { try await buildIdentityApplication($0) }
