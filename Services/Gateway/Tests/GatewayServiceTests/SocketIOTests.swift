import Foundation
import GatewayService
import Hummingbird
import HummingbirdTesting
import LanternContracts
import LanternCore
import LanternEvents
import LanternRedis
import LanternTestSupport
import NIOPosix
import Synchronization
import Testing

@Suite("Socket.IO v4 with a real client")
struct SocketIOTests {
    /// Runs `Clients/socketio_client.py` (python-socketio, installed by scripts/test.sh); calls `onLine` for each line.
    func runClient(url: String, token: String, untilEnded: Bool = false, onLine: @escaping @Sendable ([String: Any]) -> Void) async throws -> [String] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Clients/socketio_client.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, url, token] + (untilEnded ? ["until-ended"] : [])
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let handle = pipe.fileHandleForReading
        // Blocking reads belong on NIO's blocking pool, not on the concurrency threads the gateway runs on.
        return try await NIOThreadPool.singleton.runIfActive {
            var lines: [String] = []
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 10) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    lines.append(line)
                    if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] { onLine(object) }
                }
            }
            return lines
        }
    }

    @Test("a socket ends with session_ended and a server disconnect when its token expires, and when its session is logged out")
    func sessionEnds() async throws {
        try await withLiveGateway { port, upstream, streams in
            let gateway = "http://127.0.0.1:\(port)"
            func kinds(_ lines: [String]) -> [String] {
                lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["kind"] as? String }
            }
            // A token that expires in 4 s: the socket lives as long as it does.
            let started = ContinuousClock.now
            let expiring = try await upstream.identity.token(expiresIn: 4)
            let expired = try await runClient(url: gateway, token: expiring, untilEnded: true) { _ in }
            #expect(kinds(expired) == ["connected", "state", "session_ended", "disconnected", "finished"], "\(expired)")
            #expect(expired.contains { $0.contains(#""reason": "token_expired""#) }, "\(expired)")
            #expect(ContinuousClock.now - started < .seconds(40), "the socket outlived its token")

            // A logout: identity's realtime.disconnect names the session.
            let session = UUID()
            let token = try await upstream.identity.token(session: session, expiresIn: 900)
            let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
            let stream = streams.realtime
            let loggedOut = try await runClient(url: gateway, token: token, untilEnded: true) { line in
                guard line["kind"] as? String == "state" else { return }
                Task {
                    let event = try EventEnvelope(RealtimeDisconnect(sessionIds: [session.lowercased], reason: "logged_out"), producer: "test",
                                                  subject: nil, occurredAt: Date())
                    try await EventPublisher(redis: redis).publish(event, to: stream)
                }
            }
            await redis.shutdown()
            #expect(kinds(loggedOut) == ["connected", "state", "session_ended", "disconnected", "finished"], "\(loggedOut)")
            #expect(loggedOut.contains { $0.contains(#""reason": "logged_out""#) }, "\(loggedOut)")
            // And the session's token no longer opens one.
            let again = try await runClient(url: gateway, token: token) { _ in }
            #expect(again.contains { $0.contains("session_revoked") }, "\(again)")
        }
    }

    @Test("connect with auth, receive state then new_moment, acknowledgements answered")
    func realClient() async throws {
        try await withLiveGateway { port, upstream, streams in
                let gateway = "http://127.0.0.1:\(port)"
                let user = UUID()
                let token = try await upstream.issuer.issue(userID: user, sessionID: UUID(), app: .pairly).token
                let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
                let stream = streams.realtime
                let lines = try await runClient(url: gateway, token: token) { line in
                    guard line["kind"] as? String == "state" else { return }
                    Task {
                        let frame = try PairlyFrames.newMoment(to: user.lowercased, momentId: "m-9", senderName: "Ana", sentAt: Date())
                        let event = try EventEnvelope(frame, producer: "test", subject: nil, occurredAt: Date())
                        try await EventPublisher(redis: redis).publish(event, to: stream)
                    }
                }
                await redis.shutdown()
                let kinds = lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["kind"] as? String }
                #expect(kinds == ["connected", "state", "new_moment", "ack", "unknown_ack", "finished"], "\(lines)")
                #expect(lines.contains { $0.contains(#""momentId": "m-9""#) })
                #expect(lines.contains { $0.contains("unknown_event") })

                // A bad token is a connect_error, not a hang.
                let refused = try await runClient(url: gateway, token: "not-a-token") { _ in }
                #expect(refused.contains { $0.contains("connect_error") || $0.contains("connect_failed") }, "\(refused)")
                // So is a token of an app without a real-time feed, naming why.
                let luckyDay = try await runClient(url: gateway, token: try await upstream.identity.token(app: .luckyday)) { _ in }
                #expect(luckyDay.contains { $0.contains("realtime_not_available") }, "\(luckyDay)")
        }
    }

    @Test("Engine.IO open packet and polling refusal")
    func protocolDetails() async throws {
        try await withTestGateway(.live) { client, _, _ in
                let polling = try await client.execute(uri: "/socket.io/?EIO=4&transport=polling", method: .get)
                #expect(polling.status == .badRequest)
                #expect(String(buffer: polling.body).contains("transport_unsupported"))
        }
    }
}
