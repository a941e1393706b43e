import Foundation
import GatewayService
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import LanternContracts
import LanternCore
import LanternEvents
import LanternHTTP
import LanternRedis
import LanternTestSupport
import Logging
import NIOCore
import Synchronization
import Testing

@Suite("Real-time WebSocket")
struct RealtimeTests {
    /// Connects, collects `count` text frames (running `afterFirst` once the first arrives), then closes.
    func collectFrames(port: Int, token: String, count: Int, afterFirst: @escaping @Sendable () async throws -> Void) async throws -> [String] {
        let received = Mutex<[String]>([])
        var logger = Logger(label: "ws-test")
        logger.logLevel = .error
        try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/v1/realtime?access_token=\(token)", logger: logger) { inbound, _, _ in
            for try await message in inbound.messages(maxSize: 1 << 16) {
                guard case .text(let text) = message else { continue }
                let n = received.withLock { $0.append(text); return $0.count }
                if n == 1 { try await afterFirst() }
                if n >= count { break }
            }
        }
        return received.withLock { $0 }
    }

    @Test("an Upgrade without a complete WebSocket handshake is answered (426 for /v1/realtime, 400 for Socket.IO), h2c as plain HTTP/1.1; never dropped")
    func incompleteHandshake() async throws {
        try await withLiveGateway { port, upstream, _ in
            let token = try await upstream.token()
            func status(_ path: String, _ headers: [String]) async throws -> String {
                let output = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/curl"),
                    ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "-H", "Authorization: Bearer \(token)"]
                    + headers.flatMap { ["-H", $0] } + ["http://127.0.0.1:\(port)\(path)"])
                return String(decoding: output.stdout, as: UTF8.self)
            }
            #expect(try await status("/v1/realtime", ["Upgrade: websocket"]) == "426")
            #expect(try await status("/v1/realtime", ["Upgrade: websocket", "Connection: Upgrade"]) == "426")
            #expect(try await status("/v1/realtime", ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: c2hvcnQ=",
                                                      "Sec-WebSocket-Version: 13"]) == "426")
            #expect(try await status("/socket.io/?EIO=4&transport=websocket", ["Upgrade: websocket", "Connection: Upgrade"]) == "400")
            // Any other Upgrade is plain HTTP here: h2c (what `curl --http2` asks for) gets its answer over HTTP/1.1.
            #expect(try await status("/health/live", ["Upgrade: h2c", "Connection: Upgrade, HTTP2-Settings", "HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA"]) == "200")
            let http2 = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                                   ["-s", "--http2", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "http://127.0.0.1:\(port)/health/live"])
            #expect(String(decoding: http2.stdout, as: UTF8.self) == "200")
        }
    }

    @Test("the first frame is the state; then new_moment, partner_updated and pair_disconnected reach the right user")
    func liveFrames() async throws {
        try await withLiveGateway { port, upstream, streams in
            let user = UUID()
            let token = try await upstream.issuer.issue(userID: user, sessionID: UUID(), app: .pairly).token
            let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
            let publisher = EventPublisher(redis: redis)
            let someoneElse = UUID().lowercased
            let texts = try await withDeadline(.seconds(20)) {
                try await self.collectFrames(port: port, token: token, count: 4) {
                    // What identity and media write through their outboxes (PairlyFrames) when these things happen.
                    func publish(_ frames: [RealtimeFrame]) async throws {
                        for frame in frames {
                            try await publisher.publish(EventEnvelope(frame, producer: "test", subject: nil, occurredAt: Date()), to: streams.realtime)
                        }
                    }
                    try await publish([try PairlyFrames.newMoment(to: someoneElse, momentId: "x", senderName: nil, sentAt: Date())])
                    try await publish([try PairlyFrames.newMoment(to: user.lowercased, momentId: "m-1", senderName: "Ana", sentAt: Date())])
                    try await publish([try PairlyFrames.partnerUpdated(to: user.lowercased, partnerId: someoneElse, displayName: "Ana B.")])
                    try await publish(try PairlyFrames.pairDisconnected(pairingId: "p-1", userIds: [someoneElse, user.lowercased], reason: "disconnected"))
                }
            }
            await redis.shutdown()
            let frames = texts.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            // The state comes first; events of different streams (media, identity) have no order between them.
            #expect(frames.first?["type"] as? String == "state")
            #expect(Set(frames.dropFirst().compactMap { $0["type"] as? String }) == ["new_moment", "partner_updated", "pair_disconnected"])
            func data(_ type: String) -> [String: Any]? { frames.first { $0["type"] as? String == type }?["data"] as? [String: Any] }
            #expect(data("new_moment")?["momentId"] as? String == "m-1")
            #expect(data("partner_updated")?["displayName"] as? String == "Ana B.")
            #expect(data("pair_disconnected")?["partnerId"] as? String == someoneElse)
        }
    }

    @Test("deleting the account closes its sockets")
    func deletedAccountClosesSockets() async throws {
        try await withLiveGateway { port, upstream, streams in
            let user = UUID()
            let token = try await upstream.issuer.issue(userID: user, sessionID: UUID(), app: .pairly).token
            let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
            // Only the state frame arrives; then the server closes the socket, which ends the client's loop (were it
            // left open, the loop would wait for a second frame until the timeout and the test would fail).
            let texts = try await withDeadline(.seconds(30)) {
                try await self.collectFrames(port: port, token: token, count: 2) {
                    let event = try EventEnvelope(RealtimeDisconnect(userIds: [user.lowercased], reason: "account_deleted"), producer: "test",
                                                  subject: user.lowercased, occurredAt: Date())
                    try await EventPublisher(redis: redis).publish(event, to: streams.realtime)
                }
            }
            await redis.shutdown()
            // The state, then the frame that says why, then the close (were the socket left open, the loop would wait
            // for a third frame until the deadline).
            #expect(texts.count == 2 && texts.first?.contains("\"state\"") == true, "\(texts)")
            #expect(texts.last == #"{"data":{"reason":"account_deleted"},"type":"session_ended"}"#, "\(texts)")
        }
    }

    @Test("a logged-out session's sockets end (another session's stay), its token opens none; a socket ends when its token expires")
    func endedSessionsAndExpiredTokens() async throws {
        try await withLiveGateway { port, upstream, streams in
            let user = UUID()
            let (ended, kept) = (UUID(), UUID())
            let endedToken = try await upstream.identity.token(user: user, session: ended, expiresIn: 900)
            let keptToken = try await upstream.identity.token(user: user, session: kept, expiresIn: 900)
            let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
            let keptFrames = Mutex<[String]>([])
            let keptOpen = Mutex(false)
            // The other session's socket: open throughout, it must get the frame sent after the logout.
            let other = Task {
                var logger = Logger(label: "ws-test")
                logger.logLevel = .error
                try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/v1/realtime?access_token=\(keptToken)", logger: logger) { inbound, _, _ in
                    keptOpen.withLock { $0 = true }
                    for try await message in inbound.messages(maxSize: 1 << 16) {
                        guard case .text(let text) = message else { continue }
                        let count = keptFrames.withLock { $0.append(text); return $0.count }
                        if count >= 2 { break }
                    }
                }
            }
            #expect(try await eventually { keptOpen.withLock { $0 } })
            let texts = try await withDeadline(.seconds(30)) {
                try await self.collectFrames(port: port, token: endedToken, count: 3) {
                    let event = try EventEnvelope(RealtimeDisconnect(sessionIds: [ended.lowercased], reason: "logged_out"), producer: "test",
                                                  subject: user.lowercased, occurredAt: Date())
                    try await EventPublisher(redis: redis).publish(event, to: streams.realtime)
                }
            }
            #expect(texts.count == 2 && texts.last == #"{"data":{"reason":"logged_out"},"type":"session_ended"}"#, "\(texts)")
            // The same user's other session still gets frames.
            let frame = try PairlyFrames.newMoment(to: user.lowercased, momentId: "m-after", senderName: nil, sentAt: Date())
            try await EventPublisher(redis: redis).publish(try EventEnvelope(frame, producer: "test", subject: nil, occurredAt: Date()), to: streams.realtime)
            try await withDeadline(.seconds(30)) { try await other.value }
            #expect(keptFrames.withLock { $0 }.last?.contains("m-after") == true, "\(keptFrames.withLock { $0 })")
            await redis.shutdown()

            // A socket lives as long as its token: one that expires in 3 s ends with token_expired.
            let short = try await upstream.identity.token(user: user, expiresIn: 3)
            let expired = try await withDeadline(.seconds(40)) { try await self.collectFrames(port: port, token: short, count: 3) {} }
            #expect(expired.count == 2 && expired.last == #"{"data":{"reason":"token_expired"},"type":"session_ended"}"#, "\(expired)")
        }
    }

    @Test("no token, no socket: a plain request gets 401, a valid one without upgrade 426 (header or access_token alike)")
    func refusals() async throws {
        try await withTestGateway(.live) { client, upstream, _ in
            #expect(try await client.execute(uri: "/v1/realtime", method: .get).status == .unauthorized)
            let token = try await upstream.token()
            #expect(try await client.execute(uri: "/v1/realtime", method: .get, headers: [.authorization: "Bearer \(token)"]).status.code == 426)
            #expect(try await client.execute(uri: "/v1/realtime?access_token=\(token)", method: .get).status.code == 426)
        }
    }

    @Test("a WebSocket handshake that cannot be admitted gets the problem a request would: 401 token_expired, 401 for a deleted account, 403 for an app without a feed")
    func refusedHandshakes() async throws {
        try await withLiveGateway { port, upstream, streams in
            func handshake(_ token: String) async throws -> (status: String, body: String) {
                let connection = try await RawConnection(port: port)
                try await connection.send("GET /v1/realtime?access_token=\(token) HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                          + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                let head = try #require(try await connection.answerHead())
                if head.hasPrefix("HTTP/1.1 101 ") {
                    try? await connection.channel.close()
                    return ("101", head)
                }
                // A refusal: the problem follows its head; the connection stays open for the next request.
                var answer = head
                for _ in 0..<100 where !answer.hasSuffix("}") {
                    try await Task.sleep(for: .milliseconds(20))
                    answer = connection.collector.text.withLock { $0 }
                }
                try? await connection.channel.close()
                return (String(answer.dropFirst(9).prefix(3)), answer)
            }
            let expired = try await handshake(try await upstream.identity.expiredToken())
            #expect(expired.status == "401" && expired.body.contains("token_expired"), "\(expired.body.prefix(200))")
            let garbage = try await handshake("not-a-token")
            #expect(garbage.status == "401", "\(garbage.body.prefix(200))")
            let luckyDay = try await handshake(try await upstream.identity.token(app: .luckyday))
            #expect(luckyDay.status == "403" && luckyDay.body.contains("realtime_not_available"), "\(luckyDay.body.prefix(200))")
            // AstroSvitla has a feed (report_ready): its handshake is accepted.
            let astro = try await handshake(try await upstream.identity.token(app: .astrosvitla))
            #expect(astro.status == "101", "\(astro.body.prefix(200))")

            let user = UUID()
            let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
            let event = try EventEnvelope(RealtimeDisconnect(userIds: [user.lowercased], reason: "account_deleted"), producer: "test",
                                          subject: user.lowercased, occurredAt: Date())
            // The feed reads from its newest entry on: publish until this gateway has taken the deletion in.
            var deleted: (status: String, body: String) = ("", "")
            for _ in 0..<100 {
                try await EventPublisher(redis: redis).publish(event, to: streams.realtime)
                deleted = try await handshake(try await upstream.identity.token(user: user, app: .pairly))
                if deleted.status != "101" { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(deleted.status == "401" && deleted.body.contains("account_deleted"), "\(deleted.body.prefix(200))")

            // A session logged out: its tokens are refused, another session's of the same user is not.
            let session = UUID(), owner = UUID()
            let loggedOut = try EventEnvelope(RealtimeDisconnect(sessionIds: [session.lowercased], reason: "logged_out"), producer: "test",
                                              subject: owner.lowercased, occurredAt: Date())
            var revoked: (status: String, body: String) = ("", "")
            for _ in 0..<100 {
                try await EventPublisher(redis: redis).publish(loggedOut, to: streams.realtime)
                revoked = try await handshake(try await upstream.identity.token(user: owner, session: session, expiresIn: 900))
                if revoked.status != "101" { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            await redis.shutdown()
            #expect(revoked.status == "401" && revoked.body.contains("session_revoked"), "\(revoked.body.prefix(200))")
            let otherSession = try await handshake(try await upstream.identity.token(user: owner, session: UUID(), expiresIn: 900))
            #expect(otherSession.status == "101", "\(otherSession.body.prefix(200))")
        }
    }
}
