import IdentityService
import LanternHTTP

// identity: accounts, sessions, devices. Configuration: docs/configuration.md.
await ServiceMain.run("identity") { try await buildIdentityApplication(IdentityConfiguration(settings: $0)) }
