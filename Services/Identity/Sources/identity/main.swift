import Foundation
import Hummingbird
import IdentityService
import LanternCore

// identity: accounts, sessions, devices. Configuration: docs/configuration.md.
do {
    let configuration = try IdentityConfiguration(settings: .environment())
    let app = try await buildIdentityApplication(configuration)
    try await app.runService()
} catch let error as ConfigurationError {
    print("identity: \(error)")
    exit(78)  // EX_CONFIG
}
