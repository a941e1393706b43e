import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import LanternRedis
import Logging
import ServiceLifecycle
import Tracing

/// Carries real-time frames from `lantern.realtime` to the users' open connections on this instance.
///
/// Every gateway instance must see every frame (it may hold any user's socket), so this is a plain `XREAD` from
/// the newest entry rather than a consumer group: a fan-out, at most once. An app that missed a frame catches up
/// from the state frame it gets when it reconnects. The gateway does not interpret frames: producers write them
/// (`RealtimeFrame`, `RealtimeDisconnect`) through their outboxes.
struct RealtimeFeed: Service {
    let hub: RealtimeHub
    let endpoint: RedisEndpoint
    let streams: StreamNames
    let logger: Logger

    func run() async throws {
        let redis = RedisClient(endpoint: endpoint, size: 1, commandTimeout: .seconds(7))
        let stream = streams.realtime
        // Start after the newest entry, with a concrete id: re-reading from `$` on every call would miss entries
        // added between two calls.
        var position: String?
        var backoff = Backoff()
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                if position == nil { position = try await Self.newestID(stream, redis: redis) }
                let reply = try await redis.send(["XREAD", "COUNT", "256", "BLOCK", "2000", "STREAMS", stream, position ?? "0-0"])
                backoff.reset()
                for entry in StreamEntry.entries(ofXREAD: reply) {
                    position = entry.id
                    guard let event = entry.envelope else { continue }
                    deliver(event)
                }
            } catch {
                logger.warning("real-time feed paused", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: backoff.next())
            }
        }
        await redis.shutdown()
    }

    /// The id of the stream's newest entry (`0-0` for an empty or missing stream).
    static func newestID(_ stream: String, redis: RedisClient) async throws -> String {
        let reply = try await redis.send(["XREVRANGE", stream, "+", "-", "COUNT", "1"])
        return reply.array?.first?.array?.first?.string ?? "0-0"
    }

    func deliver(_ event: EventEnvelope) {
        switch event.type {
        case RealtimeFrame.eventType:
            guard let frame = try? event.payload(as: RealtimeFrame.self) else { return }
            let outbound = OutboundFrame(type: frame.type, data: frame.data)
            let connections = frame.recipients.reduce(0) { $0 + hub.send(outbound, to: $1) }
            guard connections > 0 else { return }
            // In the trace of the change that wrote the frame: one upload can be followed to the partner's socket.
            InstrumentationContext.withValue(EventTrace.context(of: event)) {
                logger.info("real-time frame sent", metadata: ["type": "\(frame.type)", "connections": "\(connections)"])
            }
        case RealtimeDisconnect.eventType:
            guard let disconnect = try? event.payload(as: RealtimeDisconnect.self) else { return }
            let ended = hub.end(users: disconnect.userIds, sessions: disconnect.sessionIds, reason: disconnect.reason)
            logger.info("real-time connections ended", metadata: ["reason": "\(disconnect.reason)", "connections": "\(ended)"])
        default:
            return
        }
    }
}
