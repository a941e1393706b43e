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
    FileHandle.standardError.write(Data("identity: \(error)\n".utf8))
    exit(78)  // EX_CONFIG
} catch {
    FileHandle.standardError.write(Data("identity: stopped: \(error)\n".utf8))
    exit(1)
}
