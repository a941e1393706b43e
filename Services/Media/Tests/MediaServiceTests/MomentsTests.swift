import Foundation
import Hummingbird
import HummingbirdTesting
import LanternContracts
import LanternCore
import LanternEvents
import LanternRedis
import LanternObjectStorage
import LanternTestSupport
import MediaService
import NIOCore
import NIOFoundationCompat
import PostgresNIO
import Testing

@Suite("Pairly moments")
struct MomentsTests {
    @Test("the partner gets the photo without its metadata; the sender cannot fetch it; ETags save downloads")
    func shareAndFetch() async throws {
        try await MediaHarness.run { h in
            let (a, b) = (UUID(), UUID())
            _ = try await h.pair(a, b)
            let jpeg = try Fixtures.bytes("with-exif.jpg")
            let uploaded = try await h.upload(jpeg, as: a)
            #expect(uploaded.status == .created, "\(String(buffer: uploaded.body))")

            let photo = try await h.get("/v1/moments/current", as: b)
            #expect(photo.status == .ok)
            #expect(photo.headers[.contentType] == "image/jpeg")
            #expect(photo.headers[.cacheControl]?.contains("private") == true)
            let etag = try #require(photo.headers[.eTag])
            let bytes = Array(buffer: photo.body)
            for secret in ["SecretCam", "Model-GPS-Leak", "SecretPlace", "SecretComment"] { #expect(!Fixtures.contains(bytes, secret)) }
            #expect(bytes.starts(with: [0xFF, 0xD8]))

            #expect(try await h.get("/v1/moments/current", as: b, headers: [.ifNoneMatch: etag]).status == .notModified)
            let own = try await h.get("/v1/moments/current", as: a)
            #expect(own.status == .notFound)
            #expect(String(buffer: own.body).contains("no_moment"))

            let widget = try await h.get("/v1/widgets/pairly", as: b)
            #expect(widget.status == .ok)
            let json = try JSONSerialization.jsonObject(with: Data(buffer: widget.body)) as? [String: Any]
            #expect(json?["hasPhoto"] as? Bool == true && json?["senderName"] as? String == "Ana" && json?["photoUrl"] as? String == "/v1/moments/current")
            let widgetTag = try #require(widget.headers[.eTag])
            #expect(try await h.get("/v1/widgets/pairly", as: b, headers: [.ifNoneMatch: widgetTag]).status == .notModified)
            let empty = try await h.get("/v1/widgets/pairly", as: a).body
            #expect(String(buffer: empty).contains(#""hasPhoto":false"#))

            // The outbox relay publishes after the commit, on its own time (slow on a loaded machine): wait for it.
            let shared = try await eventuallyValue { () -> [EventEnvelope]? in
                let found = try await h.events("moment.shared")
                return found.isEmpty ? nil : found
            } ?? []
            #expect(shared.count == 1 && shared.first?.subject == b.lowercased && shared.first?.data["senderName"]?.stringValue == "Ana")
            // The receiver gets a silent push (widget refresh) and a visible one, queued with the moment.
            let pushes = try await eventuallyValue { () -> [PushRequest]? in
                let reply = try await h.redis.send(["XRANGE", h.streams.jobs("push"), "-", "+"])
                let found = (reply.array ?? []).compactMap { $0.array?[1].array?[1].string }.compactMap { try? EventEnvelope.decode($0).payload(as: PushRequest.self) }
                return found.count >= 2 ? found : nil
            } ?? []
            #expect(pushes.map(\.delivery).sorted { $0.rawValue < $1.rawValue } == [.alert, .background])
            #expect(pushes.allSatisfy { $0.userId == b.lowercased && $0.kind == "pairly.moment_shared" && $0.data?["momentId"] == shared.first?.data["momentId"]?.stringValue })
            #expect(pushes.first { $0.delivery == .alert }?.args == ["partnerName": "Ana"])
        }
    }

    @Test("multipart/form-data uploads (React Native FormData) work the same")
    func multipart() async throws {
        try await MediaHarness.run { h in
            let (a, b) = (UUID(), UUID())
            _ = try await h.pair(a, b)
            let jpeg = try Fixtures.bytes("with-exif.jpg")
            let boundary = "----lantern\(UUID().uuidString)"
            var body = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nhi\r\n".utf8)
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"IMG_0001.JPG\"\r\nContent-Type: image/jpeg\r\n\r\n".utf8)
            body += jpeg + Array("\r\n--\(boundary)--\r\n".utf8)
            let uploaded = try await h.upload(body, as: a, contentType: "multipart/form-data; boundary=\(boundary)")
            #expect(uploaded.status == .created, "\(String(buffer: uploaded.body))")
            let photo = try await h.get("/v1/moments/current", as: b)
            #expect(photo.headers[.contentType] == "image/jpeg" && !Fixtures.contains(Array(buffer: photo.body), "SecretCam"))
            let empty = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nhi\r\n--\(boundary)--\r\n".utf8)
            let missing = try await h.upload(empty, as: a, contentType: "multipart/form-data; boundary=\(boundary)")
            #expect(missing.status.code == 422 && String(buffer: missing.body).contains("image_missing"))
            let noBoundary = try await h.upload(body, as: a, contentType: "multipart/form-data")
            #expect(noBoundary.status == .badRequest)
        }
    }

    @Test("a new photo replaces the old one, whose bytes are deleted; there is no history", arguments: MediaHarness.Storage.allCases)
    func replace(storage: MediaHarness.Storage) async throws {
        try await MediaHarness.run(storage: storage) { h in
            let (a, b) = (UUID(), UUID())
            _ = try await h.pair(a, b)
            #expect(try await h.upload(try Fixtures.bytes("with-exif.jpg"), as: a).status == .created)
            #expect(try await h.upload(try Fixtures.bytes("with-text.png"), as: a, contentType: "image/png").status == .created)
            #expect(try await h.get("/v1/moments/current", as: b).headers[.contentType] == "image/png")
            #expect(await h.storedFiles() == 1)
            // Each partner has their own current photo from the other.
            #expect(try await h.upload(try Fixtures.bytes("with-exif.webp"), as: b, contentType: "image/webp").status == .created)
            #expect(try await h.get("/v1/moments/current", as: a).headers[.contentType] == "image/webp")
            #expect(await h.storedFiles() == 2)
        }
    }

    @Test("a retried upload with the same Idempotency-Key stores and announces one moment")
    func idempotentRetry() async throws {
        try await MediaHarness.run { h in
            let (a, b) = (UUID(), UUID())
            _ = try await h.pair(a, b)
            let heic = try Fixtures.bytes("with-exif.heic")
            let first = try await h.upload(heic, as: a, key: "retry-1", contentType: "image/heic")
            let second = try await h.upload(heic, as: a, key: "retry-1", contentType: "image/heic")
            #expect(first.status == .created && second.status == .ok)
            let id1 = (try JSONSerialization.jsonObject(with: Data(buffer: first.body)) as? [String: Any])?["momentId"] as? String
            let id2 = (try JSONSerialization.jsonObject(with: Data(buffer: second.body)) as? [String: Any])?["momentId"] as? String
            #expect(id1 != nil && id1 == id2)
            #expect(await h.storedFiles() == 1)
            _ = try await eventually { try await h.events("moment.shared").count >= 1 }
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await h.events("moment.shared").count == 1)
            let reused = try await h.upload(try Fixtures.bytes("with-exif.jpg"), as: a, key: "retry-1")
            #expect(reused.status.code == 422 && String(buffer: reused.body).contains("idempotency_key_reused"))
        }
    }

    @Test("non-images, truncated and damaged images, oversize files and pixel bombs get clear 4xx problems")
    func badUploads() async throws {
        try await MediaHarness.run(maxBytes: 1200) { h in
            let (a, b, loner) = (UUID(), UUID(), UUID())
            _ = try await h.pair(a, b)
            let png = try Fixtures.bytes("with-text.png")
            let cases: [(String, [UInt8], String, Int, String)] = [
                ("text", Array("hello, not a photo".utf8), "image/jpeg", 415, "unsupported_media_type"),
                ("gif", Array("GIF89a....".utf8), "image/gif", 415, "unsupported_media_type"),
                ("wrong content type", png, "text/plain", 415, "unsupported_media_type"),
                ("truncated", Array(png.prefix(100)), "image/png", 422, "image_truncated"),
                ("oversize", try Fixtures.bytes("with-exif.jpg"), "image/jpeg", 413, "payload_too_large"),
                ("empty", [], "image/png", 400, "image_missing"),
            ]
            for (name, bytes, type, status, code) in cases {
                let response = try await h.upload(bytes, as: a, contentType: type)
                #expect(response.status.code == status, "\(name): \(String(buffer: response.body))")
                #expect(String(buffer: response.body).contains(code), "\(name): \(String(buffer: response.body))")
            }
            var bomb = png
            bomb.replaceSubrange(16..<24, with: [0, 0, 0xC3, 0x50, 0, 0, 0xC3, 0x50])
            let bombed = try await h.upload(bomb, as: a, contentType: "image/png")
            #expect(bombed.status.code == 422 && String(buffer: bombed.body).contains("image_too_many_pixels"))
            let lonely = try await h.upload(png, as: loner, contentType: "image/png")
            #expect(lonely.status == .conflict && String(buffer: lonely.body).contains("not_paired"))
            // Nothing an unpaired user sends is parsed: whatever the bytes, the answer is that they are not paired.
            let unparsed = try await h.upload(Array("not an image at all".utf8), as: loner, contentType: "image/png")
            #expect(unparsed.status == .conflict && String(buffer: unparsed.body).contains("not_paired"))
            var headers: HTTPFields = [.authorization: "Bearer \(try await h.identity.token(user: a, app: .luckyday))", .contentType: "image/png"]
            headers[.accept] = "application/json"
            #expect(try await h.client.execute(uri: "/v1/moments", method: .post, headers: headers, body: ByteBuffer(bytes: png)).status == .forbidden)
            #expect(try await h.client.execute(uri: "/v1/moments", method: .post, headers: [.contentType: "image/png"], body: ByteBuffer(bytes: png)).status == .unauthorized)
            #expect(await h.storedFiles() == 0)
        }
    }

    @Test("ending the pairing or deleting an account erases the photos", arguments: MediaHarness.Storage.allCases)
    func erasure(storage: MediaHarness.Storage) async throws {
        try await MediaHarness.run(storage: storage) { h in
            let (a, b) = (UUID(), UUID())
            let pairing = try await h.pair(a, b)
            #expect(try await h.upload(try Fixtures.bytes("with-exif.jpg"), as: a).status == .created)
            #expect(try await h.upload(try Fixtures.bytes("with-text.png"), as: b, contentType: "image/png").status == .created)
            try await h.identityEvent("pairing.dissolved", subject: a, data: .object([
                "pairingId": .string(pairing.lowercased), "app": .string("pairly"), "endedBy": .string(a.lowercased), "reason": .string("disconnected"),
                "userIds": .array([.string(a.lowercased), .string(b.lowercased)]),
            ]))
            #expect(try await eventually { await h.storedFiles() == 0 })
            #expect(try await h.get("/v1/moments/current", as: b).status == .notFound)
            #expect(try await h.upload(try Fixtures.bytes("with-text.png"), as: a, contentType: "image/png").status == .conflict)

            let (c, d) = (UUID(), UUID())
            _ = try await h.pair(c, d)
            #expect(try await h.upload(try Fixtures.bytes("with-exif.jpg"), as: c).status == .created)
            try await h.identityEvent("user.deleted", subject: c, data: .object(["userId": .string(c.lowercased), "app": .string("pairly")]))
            #expect(try await eventually { await h.storedFiles() == 0 })
            #expect(try await h.count("SELECT count(*) FROM media.moments") == 0)
            #expect(try await h.count("SELECT count(*) FROM media.names WHERE user_id = '\(c.lowercased)'") == 0)
        }
    }
}
