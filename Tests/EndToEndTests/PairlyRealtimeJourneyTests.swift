import Foundation
import HummingbirdWSClient
import LanternTestSupport
import Logging
import Synchronization
import Testing

extension EndToEnd.Shared {
@Suite("Pairly real time end to end", .serialized)
struct PairlyRealtimeJourneyTests {
    /// A `/v1/realtime` socket through the gateway that keeps every frame it receives, until the server closes it.
    final class Socket: Sendable {
        private let texts = Mutex<[String]>([])
        private let closed = Mutex(false)
        private let task = Mutex<Task<Void, Never>?>(nil)

        init(gateway: String, token: String) {
            let url = gateway.replacingOccurrences(of: "http://", with: "ws://") + "/v1/realtime?access_token=\(token)"
            let started = Task { [self] in
                var logger = Logger(label: "e2e-ws")
                logger.logLevel = .error
                _ = try? await WebSocketClient.connect(url: url, logger: logger) { inbound, _, _ in
                    for try await message in inbound.messages(maxSize: 1 << 16) {
                        if case .text(let text) = message { self.texts.withLock { $0.append(text) } }
                    }
                }
                self.closed.withLock { $0 = true }
            }
            task.withLock { $0 = started }
        }

        private var frames: [[String: Any]] {
            texts.withLock { $0 }.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
        func data(_ type: String) -> [[String: Any]] {
            frames.filter { $0["type"] as? String == type }.compactMap { $0["data"] as? [String: Any] }
        }
        var types: [String] { frames.compactMap { $0["type"] as? String } }
        var isClosed: Bool { closed.withLock { $0 } }
        func close() { task.withLock { $0?.cancel() } }
    }

    @Test("Bohdan's socket hears, in order of events, the pairing, Ana's photo, her new name, the disconnection; her logout closes hers, deleting his account closes his")
    func realtime() async throws {
        try await Stack.shared { stack in
            func signIn(_ name: String) async throws -> TokenReply {
                let tokens = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"pairly"}"#).json(TokenReply.self)
                #expect(try await stack.call(.PATCH, "/v1/me", token: tokens.accessToken, json: #"{"displayName":"\#(name)"}"#).status == 200)
                return tokens
            }
            let a = try await signIn("Ana")
            let b = try await signIn("Bohdan")
            let socket = Socket(gateway: stack.gateway, token: b.accessToken)
            defer { socket.close() }

            // The state comes first: not paired, no photo yet.
            #expect(try await eventually { socket.types.first == "state" })
            let state = try #require(socket.data("state").first)
            #expect(state["pairing"] is NSNull)
            #expect((state["moment"] as? [String: Any])?["hasPhoto"] as? Bool == false)

            struct Invite: Decodable { var code: String }
            let code = try await stack.call(.POST, "/v1/pairing/invites", token: a.accessToken).json(Invite.self).code
            #expect(try await stack.call(.POST, "/v1/pairing/join", token: b.accessToken, json: #"{"code":"\#(code)"}"#).status == 201)
            #expect(try await eventually { socket.data("paired").first?["partnerId"] as? String == a.user?.id })

            let jpeg = try PairlyJourneyTests.fixture("with-exif.jpg")
            // With an Idempotency-Key: the receipt kept for a replay names the receiver, and must go with B's account.
            let key = [("Idempotency-Key", UUID().uuidString)]
            var uploaded = try await stack.call(.POST, "/v1/moments", token: a.accessToken, contentType: "image/jpeg", bytes: jpeg, headers: key)
            for _ in 0..<100 where uploaded.status == 409 {  // media learns of the pairing from identity's events
                try await Task.sleep(for: .milliseconds(50))
                uploaded = try await stack.call(.POST, "/v1/moments", token: a.accessToken, contentType: "image/jpeg", bytes: jpeg, headers: key)
            }
            #expect(uploaded.status == 201)
            struct Receipt: Decodable { var momentId: String }
            let moment = try uploaded.json(Receipt.self).momentId
            #expect(try await eventually { socket.data("new_moment").first?["momentId"] as? String == moment })
            #expect(socket.data("new_moment").first?["senderName"] as? String == "Ana")

            #expect(try await stack.call(.PATCH, "/v1/me", token: a.accessToken, json: #"{"displayName":"Ana B."}"#).status == 200)
            #expect(try await eventually { socket.data("partner_updated").first?["displayName"] as? String == "Ana B." })
            #expect(socket.data("partner_updated").first?["partnerId"] as? String == a.user?.id)

            // A second socket's state is the catch-up: the partnership and the photo, from identity and media.
            let later = Socket(gateway: stack.gateway, token: b.accessToken)
            #expect(try await eventually { later.types.first == "state" })
            let caughtUp = try #require(later.data("state").first)
            #expect((caughtUp["pairing"] as? [String: Any])?["partnerId"] as? String == a.user?.id)
            #expect((caughtUp["moment"] as? [String: Any])?["momentId"] as? String == moment)
            later.close()

            #expect(try await stack.call(.DELETE, "/v1/pairing", token: a.accessToken).status == 204)
            #expect(try await eventually { socket.data("pair_disconnected").first?["reason"] as? String == "disconnected" })
            #expect(socket.data("pair_disconnected").first?["partnerId"] as? String == a.user?.id)

            // Ana logs out: her socket ends with that session (identity's outbox, the gateway), Bohdan's stays open.
            let hers = Socket(gateway: stack.gateway, token: a.accessToken)
            defer { hers.close() }
            #expect(try await eventually { hers.types.first == "state" })
            #expect(try await stack.call(.POST, "/v1/auth/logout", token: a.accessToken).status == 204)
            #expect(try await eventually { hers.isClosed }, "a logged-out session's socket is closed")
            #expect(hers.types == ["state", "session_ended"] && hers.data("session_ended").first?["reason"] as? String == "logged_out")
            #expect(!socket.isClosed)

            #expect(try await stack.call(.DELETE, "/v1/me", token: b.accessToken).status == 204)
            #expect(try await eventually { socket.isClosed }, "a deleted account's socket is closed")
            #expect(socket.types == ["state", "paired", "new_moment", "partner_updated", "pair_disconnected", "session_ended"])
            #expect(socket.data("session_ended").first?["reason"] as? String == "account_deleted")

            // Account deletion reaches every service: once the services have handled `user.deleted`, no column of
            // any schema names B but the documented tombstone (push-worker's `deleted_users`, kept 30 days).
            let deletedID = try #require(b.user?.id)
            var left: [String] = []
            for _ in 0..<100 {
                left = try await stack.columnsNaming(deletedID).filter { $0 != "push.deleted_users.user_id" }
                if left.isEmpty { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(left.isEmpty, "still naming the deleted account: \(left)")
        }
    }
}
}
