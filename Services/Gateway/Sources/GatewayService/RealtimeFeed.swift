import Foundation
import LanternCore
import LanternEvents
import LanternRedis
import Logging
import ServiceLifecycle

/// Turns domain events into frames for the users' open connections.
///
/// Every gateway instance must see every event (it may hold any user's socket), so this is a plain `XREAD` from
/// the newest entry rather than a consumer group: a fan-out, at most once. An app that missed a frame catches up
/// from the state frame it gets when it reconnects.
struct RealtimeFeed: Service {
    let hub: RealtimeHub
    let endpoint: RedisEndpoint
    let streams: StreamNames
    let logger: Logger

    /// The JSON frame sent to apps: `{"type": …, "data": {…}}`.
    struct Frame: Encodable {
        var type: String
        var data: JSONValue
        func encoded() -> String { (try? String(decoding: JSONEncoder.lantern.encode(self), as: UTF8.self)) ?? "{}" }
    }

    func run() async throws {
        let redis = RedisClient(endpoint: endpoint, size: 1, commandTimeout: .seconds(7))
        let sources = [streams.events("identity"), streams.events("media")]
        // Start after the newest entries, with concrete ids: re-reading from `$` on every call would miss entries
        // added between two calls.
        var positions: [String]?
        var backoff = Duration.milliseconds(100)
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                if positions == nil { positions = try await Self.newestIDs(sources, redis: redis) }
                var current = positions ?? []
                let reply = try await redis.send(["XREAD", "COUNT", "256", "BLOCK", "2000", "STREAMS"] + sources + current)
                backoff = .milliseconds(100)
                for stream in reply.array ?? [] {
                    guard let pair = stream.array, pair.count == 2, let name = pair[0].string, let index = sources.firstIndex(of: name) else { continue }
                    for entry in pair[1].array ?? [] {
                        guard let parts = entry.array, parts.count == 2, let id = parts[0].string else { continue }
                        current[index] = id
                        let fields = parts[1].array ?? []
                        guard fields.count >= 2, let raw = fields[1].string, let event = try? EventEnvelope.decode(raw) else { continue }
                        deliver(event)
                    }
                }
                positions = current
            } catch {
                logger.warning("real-time feed paused", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(5))
            }
        }
        await redis.shutdown()
    }

    /// The id of each stream's newest entry (`0-0` for an empty or missing stream).
    static func newestIDs(_ streams: [String], redis: RedisClient) async throws -> [String] {
        var ids: [String] = []
        for stream in streams {
            let reply = try await redis.send(["XREVRANGE", stream, "+", "-", "COUNT", "1"])
            ids.append(reply.array?.first?.array?.first?.string ?? "0-0")
        }
        return ids
    }

    func deliver(_ event: EventEnvelope) {
        if event.type == "user.deleted", let user = event.data["userId"]?.stringValue {
            hub.disconnectAll(user: user)
            return
        }
        for (user, frame) in Self.frames(for: event) { hub.send(frame.encoded(), to: user) }
    }

    /// Which users hear of an event, and what they are told (frame names follow the Pairly spec).
    static func frames(for event: EventEnvelope) -> [(String, Frame)] {
        let data = event.data
        switch event.type {
        case "moment.shared":
            guard let receiver = data["receiverId"]?.stringValue else { return [] }
            return [(receiver, Frame(type: "new_moment", data: .object([
                "momentId": data["momentId"] ?? .null, "senderName": data["senderName"] ?? .null, "sentAt": data["sentAt"] ?? .null,
            ])))]
        case "profile.renamed":
            guard let partner = data["partnerId"]?.stringValue else { return [] }
            return [(partner, Frame(type: "partner_updated", data: .object([
                "partnerId": data["userId"] ?? .null, "displayName": data["displayName"] ?? .null,
            ])))]
        case "pairing.established", "pairing.dissolved":
            guard case .array(let ids)? = data["userIds"] else { return [] }
            let users = ids.compactMap(\.stringValue)
            return users.map { user in
                let partner = users.first { $0 != user }.map(JSONValue.string) ?? .null
                let type = event.type == "pairing.established" ? "paired" : "pair_disconnected"
                return (user, Frame(type: type, data: .object(["pairingId": data["pairingId"] ?? .null, "partnerId": partner,
                                                                "reason": data["reason"] ?? .null])))
            }
        default:
            return []
        }
    }
}
