import AsyncHTTPClient
import Foundation
import NIOCore

/// A process's operations listener (`OPS_PORT`) in a test: the test picks the port, passes it in the
/// configuration, and reads `/health/ready`, `/metrics` or the gateway's `/health` from it.
public struct OperationsPort: Sendable {
    public let port: Int

    public init() throws { port = try freePort() }

    /// The variable to merge into a service's test configuration.
    public var variables: [String: String] { ["OPS_PORT": String(port)] }

    /// `GET path` on the operations port: status and body. Waits (up to 30 s) for the listener to accept.
    public func get(_ path: String) async throws -> (status: Int, body: String) {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"), timeout: .seconds(10))
                let body = try await response.body.collect(upTo: 16 << 20)
                return (Int(response.status.code), String(buffer: body))
            } catch {
                // Not listening yet (the listener starts with the process's services): try again until the deadline.
                if ContinuousClock.now > deadline { throw error }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
