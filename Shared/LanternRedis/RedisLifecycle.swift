import LanternRedis
import ServiceLifecycle

/// Closes a `RedisClient` when the process shuts down, after the services using it have stopped.
public struct RedisLifecycle: Service {
    public let client: RedisClient
    public init(client: RedisClient) { self.client = client }

    public func run() async throws {
        try? await gracefulShutdown()
        await client.shutdown()
    }
}
