import Foundation
import LanternContracts
import LanternRedis
import LanternTestSupport
import Testing

/// The services' Redis users (`RedisAccess`) in a real Redis: what each may do, and what Redis refuses it.
@Suite("Redis users per service: each writes only its own streams and reads what it consumes")
struct RedisAccessTests {
    /// A client signed in as `service` under `prefix`.
    static func client(_ service: String, prefix: String) async throws -> RedisClient {
        RedisClient(endpoint: try RedisEndpoint(url: try await TestEnvironment.redisURL(for: service, prefix: prefix)), size: 1)
    }

    static func refused(_ redis: RedisClient, _ command: [String]) async -> Bool {
        do { _ = try await redis.send(command); return false } catch RedisError.server(let message) { return message.hasPrefix("NOPERM") } catch { return false }
    }

    @Test("content appends to its own stream, push jobs, frames and the dead letters of what it reads; never to identity's stream or a stream it reads; it reads through its group; it counts its renders and model calls, not the gateway's counters")
    func content() async throws {
        let prefix = TestEnvironment.uniquePrefix()
        let streams = StreamNames(prefix: prefix)
        let redis = try await Self.client("content", prefix: prefix)
        let event = ["*", "event", "{}"]
        for stream in [streams.events("content"), streams.jobs("push"), streams.realtime, streams.deadLetter(of: streams.events("identity"))] {
            #expect(try await redis.send(["XADD", stream] + event).string != nil, "\(stream)")
        }
        #expect(await Self.refused(redis, ["XADD", streams.events("identity")] + event), "user.deleted forged as content")
        #expect(await Self.refused(redis, ["XADD", streams.events("gamification")] + event), "a stream it reads is not its to write")
        #expect(await Self.refused(redis, ["XADD", streams.jobs("evolution")] + event))
        _ = try await redis.send(["XGROUP", "CREATE", streams.events("identity"), "content", "0", "MKSTREAM"])
        #expect(try await redis.send(["XREADGROUP", "GROUP", "content", "c1", "COUNT", "1", "STREAMS", streams.events("identity"), ">"]).isNull)
        #expect(await Self.refused(redis, ["XREAD", "STREAMS", streams.realtime, "0"]), "the sockets' frames are the gateway's to read")
        #expect(await Self.refused(redis, ["XRANGE", streams.events("media"), "-", "+"]))
        #expect(try await redis.send(["EVAL", "return redis.call('INCR', KEYS[1])", "1", "\(prefix):ratelimit:renders:u1"]).int == 1)
        #expect(await Self.refused(redis, ["EVAL", "return redis.call('INCR', KEYS[1])", "1", "\(prefix):ratelimit:user:u1"]))
        #expect(await Self.refused(redis, ["SET", "\(prefix).push.sent.x", "1"]))
        #expect(await Self.refused(redis, ["FLUSHALL"]))
        #expect(await Self.refused(redis, ["ACL", "SETUSER", "\(prefix)-content", "+@all"]))
        await redis.shutdown()
    }

    @Test("the gateway reads the frames and writes only its counters and the development clock; identity cannot read another service's stream")
    func gatewayAndIdentity() async throws {
        let prefix = TestEnvironment.uniquePrefix()
        let streams = StreamNames(prefix: prefix)
        let gateway = try await Self.client("gateway", prefix: prefix)
        #expect(try await gateway.send(["XREAD", "COUNT", "1", "STREAMS", streams.realtime, "0"]).isNull)
        #expect(await Self.refused(gateway, ["XADD", streams.realtime, "*", "event", "{}"]))
        #expect(await Self.refused(gateway, ["XADD", streams.events("identity"), "*", "event", "{}"]))
        #expect(try await gateway.send(["INCRBY", "\(prefix):ratelimit:user:u1:1", "3"]).int == 3)
        #expect(try await gateway.send(["INCRBY", streams.developmentClockOffset, "1000"]).int == 1000)
        let identity = try await Self.client("identity", prefix: prefix)
        #expect(try await identity.send(["XADD", streams.events("identity"), "*", "event", "{}"]).string != nil)
        #expect(await Self.refused(identity, ["XREADGROUP", "GROUP", "g", "c", "STREAMS", streams.events("content"), ">"]))
        #expect(await Self.refused(identity, ["INCRBY", streams.developmentClockOffset, "1000"]), "only the gateway moves the clock")
        #expect(try await identity.send(["GET", streams.developmentClockOffset]).string == "1000", "every process follows it")
        await gateway.shutdown()
        await identity.shutdown()
    }

    @Test("the table matches the event catalogue: a service's events stream is written by that service alone, every stream of the catalogue has a writer, every stream read has a writer")
    func table() {
        let streams = StreamNames()
        let writers = Dictionary(grouping: RedisAccess.all.flatMap { access in access.publishes.map { (streams.name(of: $0), access.service) } }, by: \.0)
            .mapValues { $0.map(\.1) }
        for payload in EventCatalogue.all {
            let stream = streams.name(of: payload.stream)
            #expect(writers[stream] != nil, "\(payload.eventType): nobody may write \(stream)")
            if case .events(let service) = payload.stream { #expect(writers[stream] == [service], "\(stream) written by \(writers[stream] ?? [])") }
        }
        for access in RedisAccess.all {
            for stream in access.consumes + access.follows { #expect(writers[streams.name(of: stream)] != nil, "\(access.service) reads \(stream), which nobody writes") }
        }
        let names = ((try? ServiceList.load()) ?? []).map(\.name)
        #expect(!names.isEmpty && Set(names) == Set(RedisAccess.all.map(\.service)), "one Redis user per executable of services.tsv")
    }
}
