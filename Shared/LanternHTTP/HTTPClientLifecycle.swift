import AsyncHTTPClient
import ServiceLifecycle

/// Shuts an HTTP client down when the process stops, after the services using it have stopped.
public struct HTTPClientLifecycle: Service {
    public let client: HTTPClient
    public init(client: HTTPClient) { self.client = client }

    public func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }
}
