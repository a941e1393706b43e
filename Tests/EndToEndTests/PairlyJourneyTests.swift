import Foundation
import LanternTestSupport
import Testing

extension EndToEnd.Shared {
@Suite("Pairly end to end through the gateway", .serialized)
struct PairlyJourneyTests {
    static func fixture(_ name: String) throws -> [UInt8] {
        let url = ServiceList.root.appendingPathComponent("Tests/ImageSanitizerTests/Fixtures/\(name)")
        return Array(try Data(contentsOf: url))
    }

    static func contains(_ bytes: Data, _ text: String) -> Bool { bytes.range(of: Data(text.utf8)) != nil }

    @Test("pair with a code, share a photo (EXIF gone), replace it, retry safely, disconnect and lose it")
    func journey() async throws {
        try await Stack.shared { stack in
            // The push worker's count of identity events so far: the stack is shared with the journeys before.
            let handledBefore = try await stack.pushWorkerIdentityEventsHandled()
            func signIn(_ name: String) async throws -> TokenReply {
                let reply = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"pairly"}"#)
                #expect(reply.status == 201, "\(reply.text)")
                let tokens = try reply.json(TokenReply.self)
                #expect(try await stack.call(.PATCH, "/v1/me", token: tokens.accessToken, json: #"{"displayName":"\#(name)"}"#).status == 200)
                return tokens
            }
            let a = try await signIn("Ana")
            let b = try await signIn("Bohdan")
            // Ana has an iPhone, Bohdan an Android phone in Ukrainian.
            let iphone = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
            let android = "fcm-" + UUID().uuidString
            #expect(try await stack.call(.PUT, "/v1/me/devices/iphone-1", token: a.accessToken,
                                         json: #"{"platform":"ios","pushToken":"\#(iphone)","locale":"en-GB"}"#).status < 300)
            #expect(try await stack.call(.PUT, "/v1/me/devices/pixel-1", token: b.accessToken,
                                         json: #"{"platform":"android","pushToken":"\#(android)","locale":"uk"}"#).status < 300)
            // What reached these two phones (the fake services also hear the journeys before this one).
            @Sendable func alerts() -> [String] {
                stack.push.apnsRequests.filter { $0.path.hasSuffix(iphone) }
                    .compactMap { (($0.json?["aps"] as? [String: Any])?["alert"] as? [String: String])?["body"] }
                    + stack.push.fcmRequests.filter { ($0.json?["message"] as? [String: Any])?["token"] as? String == android }
                    .compactMap { (($0.json?["message"] as? [String: Any])?["notification"] as? [String: String])?["body"] }
            }
            // The push worker learns of devices from identity's events (2 sign-ups, 2 renames, 2 devices): wait for them.
            #expect(try await eventually { try await stack.pushWorkerIdentityEventsHandled() >= handledBefore + 6 })
            struct Invite: Decodable { var code: String }
            let invite = try await stack.call(.POST, "/v1/pairing/invites", token: a.accessToken)
            #expect(invite.status == 201)
            let code = try invite.json(Invite.self).code
            let joined = try await stack.call(.POST, "/v1/pairing/join", token: b.accessToken, json: #"{"code":"\#(code)"}"#)
            #expect(joined.status == 201, "\(joined.text)")
            // Both are told by push: identity → lantern.jobs.push → push-worker → APNs / FCM.
            #expect(try await eventually { alerts().count >= 2 })
            #expect(alerts().contains("You and Bohdan are now connected. Send your first moment!"))
            #expect(alerts().contains("Ви та Ana тепер пара. Надішліть перший момент!"))

            // media learns of the pairing from identity's events: the first upload may race it.
            let jpeg = try Self.fixture("with-exif.jpg")
            var uploaded = try await stack.call(.POST, "/v1/moments", token: a.accessToken, contentType: "image/jpeg", bytes: jpeg)
            for _ in 0..<100 where uploaded.status == 409 {
                try await Task.sleep(for: .milliseconds(50))
                uploaded = try await stack.call(.POST, "/v1/moments", token: a.accessToken, contentType: "image/jpeg", bytes: jpeg)
            }
            #expect(uploaded.status == 201, "\(uploaded.text)")

            // Bohdan's phone gets a silent push for the widget and a visible one.
            #expect(try await eventually { alerts().contains("Ana надсилає вам момент.") })
            #expect(stack.push.fcmRequests.contains { ($0.json?["message"] as? [String: Any])?["token"] as? String == android
                && (($0.json?["message"] as? [String: Any])?["data"] as? [String: String])?["kind"] == "pairly.moment_shared"
                && ($0.json?["message"] as? [String: Any])?["notification"] == nil })
            let photo = try await stack.call(.GET, "/v1/moments/current", token: b.accessToken)
            #expect(photo.status == 200)
            #expect(photo.headers.first(name: "Content-Type") == "image/jpeg")
            for secret in ["SecretCam", "Model-GPS-Leak", "SecretPlace", "SecretComment"] { #expect(!Self.contains(photo.body, secret)) }
            let senderView = try await stack.call(.GET, "/v1/moments/current", token: a.accessToken)
            #expect(senderView.status == 404 && senderView.problemCode == "no_moment")
            let widget = try await stack.call(.GET, "/v1/widgets/pairly", token: b.accessToken)
            #expect(widget.status == 200 && widget.text.contains(#""senderName":"Ana""#))

            // The app retries the same upload: one moment.
            let png = try Self.fixture("with-text.png")
            let first = try await stack.call(.POST, "/v1/moments", token: a.accessToken, contentType: "image/png", bytes: png, headers: [("Idempotency-Key", "k-1")])
            let retry = try await stack.call(.POST, "/v1/moments", token: a.accessToken, contentType: "image/png", bytes: png, headers: [("Idempotency-Key", "k-1")])
            #expect(first.status == 201 && retry.status == 200)
            #expect(try await stack.call(.GET, "/v1/moments/current", token: b.accessToken).headers.first(name: "Content-Type") == "image/png")

            let bad = try await stack.call(.POST, "/v1/moments", token: a.accessToken, contentType: "image/jpeg", bytes: Array(jpeg.prefix(300)))
            #expect(bad.status == 422 && bad.problemCode == "image_truncated")

            #expect(try await stack.call(.DELETE, "/v1/pairing", token: b.accessToken).status == 204)
            #expect(try await eventually { alerts().contains("Bohdan is no longer paired with you. Your shared moments were removed.") })
            var gone = try await stack.call(.GET, "/v1/moments/current", token: b.accessToken)
            for _ in 0..<100 where gone.status == 200 {
                try await Task.sleep(for: .milliseconds(50))
                gone = try await stack.call(.GET, "/v1/moments/current", token: b.accessToken)
            }
            #expect(gone.status == 404)
            #expect(try await stack.call(.GET, "/v1/pairing", token: a.accessToken).problemCode == "not_paired")
        }
    }
}
}
