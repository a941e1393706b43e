import Crypto
import Foundation
import JWTKit
import LanternContracts
import LanternCore
import LanternEvents
import LanternTestSupport
@testable import PushWorker
import Testing

@Suite("push-worker against fake APNs / FCM")
struct PushWorkerTests {
    @Test("APNs: alert and background pushes with the right headers, payload and one reused ES256 provider token, over HTTP/2")
    func apnsDelivery() async throws {
        try await PushHarness.run { h in
            let user = UUID()
            let token = PushHarness.apnsToken()
            try await h.register(user, device: "iphone", platform: "ios", token: token)
            try await h.push(.newMoment(to: user, delivery: .background))
            try await h.push(.newMoment(to: user, from: "Ana", delivery: .alert))
            // The fake records a request before it has checked its token: wait for both.
            #expect(try await eventually { h.fake.apnsRequests.count == 2 && h.fake.providerTokensSeen > 0 })
            let requests = h.fake.apnsRequests
            #expect(requests.allSatisfy { $0.path == "/3/device/\(token)" && $0.http2 })
            #expect(Set(requests.map(\.connection)).count == 1, "both requests multiplexed on one HTTP/2 connection")
            #expect(h.fake.providerTokensSeen == 1, "the provider token is reused, not signed per request")
            #expect(h.fake.rejectedAuthentications == 0)

            let background = try #require(requests.first { $0.headers["apns-push-type"] == "background" })
            #expect(background.headers["apns-priority"] == "5")
            #expect(background.headers["apns-topic"] == "app.lantern.pairly")
            #expect(background.headers["apns-collapse-id"] == "pairly.moment.refresh")
            let expiration = try #require(background.headers["apns-expiration"].flatMap { Double($0) })
            #expect(abs(expiration - Date().timeIntervalSince1970 - 86_400) < 60)
            #expect((background.json?["aps"] as? [String: Any])?["content-available"] as? Int == 1)
            #expect(background.json?["momentId"] as? String == "0193f4a2-7c21-7e4b-8a6d-1f2e3d4c5b6a")

            let alert = try #require(requests.first { $0.headers["apns-push-type"] == "alert" })
            #expect(alert.headers["apns-priority"] == "10")
            #expect(alert.headers["apns-collapse-id"] == "pairly.moment")
            #expect(UUID(uuidString: alert.headers["apns-id"] ?? "") != nil)
            let aps = try #require(alert.json?["aps"] as? [String: Any])
            let text = try #require(aps["alert"] as? [String: String])
            #expect(text == ["title": "New moment", "body": "Ana sent you a moment."])
            #expect(alert.json?["kind"] as? String == "pairly.moment_shared")
            #expect(alert.body.count <= 4096)
        }
    }

    @Test("FCM v1: the service-account JWT is exchanged once for an access token, reused, and renewed after a 401")
    func fcmDelivery() async throws {
        try await PushHarness.run { h in
            let user = UUID()
            let token = PushHarness.fcmToken()
            try await h.register(user, device: "pixel", platform: "android", token: token, locale: "uk-UA")
            try await h.push(.newMoment(to: user, from: "Оля", delivery: .alert))
            try await h.push(.newMoment(to: user, delivery: .background))
            #expect(try await eventually { h.fake.fcmRequests.count == 2 })
            #expect(h.fake.oauthRequests.count == 1)
            let requests = h.fake.fcmRequests
            #expect(requests.allSatisfy { $0.path == "/v1/projects/lantern-test/messages:send" && $0.http2 })

            let alert = try #require(requests.compactMap { $0.json?["message"] as? [String: Any] }.first { $0["notification"] != nil })
            #expect(alert["token"] as? String == token)
            #expect(alert["notification"] as? [String: String] == ["title": "Новий момент", "body": "Оля надсилає вам момент."])
            let android = try #require(alert["android"] as? [String: Any])
            #expect(android["priority"] as? String == "high")
            #expect(android["ttl"] as? String == "86400s")
            #expect(android["collapse_key"] as? String == "pairly.moment")
            #expect((alert["data"] as? [String: String])?["kind"] == "pairly.moment_shared")

            let background = try #require(requests.compactMap { $0.json?["message"] as? [String: Any] }.first { $0["notification"] == nil })
            #expect((background["data"] as? [String: String])?["momentId"] == "0193f4a2-7c21-7e4b-8a6d-1f2e3d4c5b6a")

            // A revoked access token: one 401, a new exchange, then delivery.
            h.fake.revokeAccessTokens()
            try await h.push(.newMoment(to: user))
            #expect(try await eventually { h.fake.fcmRequests.count == 4 })
            #expect(h.fake.oauthRequests.count == 2)
            #expect(try await h.deadLetters().isEmpty)
        }
    }

    @Test("dead tokens leave the registry: APNs 410 and 400 BadDeviceToken, FCM UNREGISTERED; other devices still served")
    func deadTokensRemoved() async throws {
        try await PushHarness.run { h in
            let user = UUID()
            let (gone, bad, unregistered, healthy) = (PushHarness.apnsToken(), PushHarness.apnsToken(), PushHarness.fcmToken(), PushHarness.apnsToken())
            try await h.register(user, device: "old-iphone", platform: "ios", token: gone)
            try await h.register(user, device: "ipad", platform: "ios", token: bad)
            try await h.register(user, device: "pixel", platform: "android", token: unregistered)
            try await h.register(user, device: "iphone", platform: "ios", token: healthy)
            h.fake.script(token: gone, [.apns(410, "Unregistered")])
            h.fake.script(token: bad, [.apns(400, "BadDeviceToken")])
            h.fake.script(token: unregistered, [.fcm(404, "NOT_FOUND", errorCode: "UNREGISTERED", message: "Requested entity was not found.")])
            try await h.push(.newMoment(to: user))
            #expect(try await eventually { try await h.deviceCount(user) == 1 })
            #expect(try await h.tokenOf(user, "iphone") == healthy)
            #expect(h.fake.apnsRequests.count == 3 && h.fake.fcmRequests.count == 1)
            #expect(try await h.deadLetters().isEmpty)
        }
    }

    @Test("429 and 5xx are retried with backoff, not before Retry-After; after the last attempt the push is dead-lettered")
    func retriesThenDeadLetter() async throws {
        let settings = ["PUSH_RETRY_BASE_SECONDS": "0.05", "PUSH_RETRY_MAX_SECONDS": "0.2", "PUSH_MAX_ATTEMPTS": "3"]
        // Retries are timed by the worker's clock, which only moves when this test moves it: the delays are
        // checked where they are decided (the retry set), not on a busy machine's wall clock.
        let time = ManualTime()
        try await PushHarness.run(settings, clock: .manual(time)) { h in
            let (patient, doomed) = (UUID(), UUID())
            let (t1, t2) = (PushHarness.apnsToken(), PushHarness.fcmToken())
            try await h.register(patient, device: "iphone", platform: "ios", token: t1)
            try await h.register(doomed, device: "pixel", platform: "android", token: t2)
            h.fake.script(token: t1, [.apns(429, "TooManyRequests", retryAfter: "2"), .apns(503, "ServiceUnavailable")])
            h.fake.script(token: t2, Array(repeating: .fcm(503, "UNAVAILABLE", errorCode: "UNAVAILABLE", message: "The service is currently unavailable."), count: 5))
            try await h.push(.newMoment(to: patient))
            let job = try await h.push(.newMoment(to: doomed))

            let afterRetryAfter = try #require(try await eventuallyValue { try await h.retryDue(patient, attempt: 2) })
            #expect(afterRetryAfter.timeIntervalSince(time.now) >= 1.999, "Retry-After: 2 honoured")
            #expect(try await eventuallyValue { try await h.retryDue(doomed, attempt: 2) } != nil)
            try await Task.sleep(for: .milliseconds(600))
            #expect(h.fake.apnsRequests.count == 1 && h.fake.fcmRequests.count == 1, "nothing is retried before it is due")
            time.advance(by: 2)
            #expect(try await eventually { h.fake.apnsRequests.count == 2 })
            // The 503 had no Retry-After: exponential backoff, at most PUSH_RETRY_MAX_SECONDS.
            let afterBackoff = try #require(try await eventuallyValue { try await h.retryDue(patient, attempt: 3) })
            #expect(afterBackoff.timeIntervalSince(time.now) <= 0.2)
            // The FCM device's second attempt (due within 0.05 s of the first) has failed too before time moves on.
            let doomedThird = try #require(try await eventuallyValue { try await h.retryDue(doomed, attempt: 3) })
            #expect(doomedThird.timeIntervalSince(time.now) <= 0.2)
            time.advance(by: 0.2)
            #expect(try await eventually { h.fake.apnsRequests.count == 3 })

            #expect(try await eventually { try await h.deadLetters().count == 1 })
            #expect(h.fake.fcmRequests.count == 3)
            let letter = try #require(try await h.deadLetters().first)
            #expect(letter["device"] == "pixel")
            #expect(letter["deliveries"] == "3")
            #expect(letter["reason"]?.contains("UNAVAILABLE") == true)
            #expect(try EventEnvelope.decode(letter["event"] ?? "").id == job.id)
            try await Task.sleep(for: .milliseconds(500))
            #expect(h.fake.apnsRequests.count == 3 && h.fake.fcmRequests.count == 3, "nothing more after success or dead-lettering")
        }
    }

    @Test("an invalid job is dead-lettered at once; an unknown user's job sends nothing")
    func invalidJobs() async throws {
        try await PushHarness.run { h in
            var broken = PushRequest.newMoment(to: UUID())
            broken.messageKey = nil  // an alert without a message
            try await h.push(broken)
            // An app no build knows: the job does not decode, and the dead letter says which field and why.
            var unknownApp = try PushRequest.newMoment(to: UUID()).envelope(producer: "test", at: Date())
            if case .object(var data) = unknownApp.data { data["app"] = .string("napster"); unknownApp.data = .object(data) }
            try await h.publish(job: unknownApp)
            #expect(try await eventually { try await h.deadLetters().count == 2 })
            let reasons = try await h.deadLetters().compactMap { $0["reason"] }
            #expect(reasons.contains { $0.contains("messageKey") } && reasons.contains { $0.contains("'app' is not one of the accepted values ('napster')") }, "\(reasons)")
            #expect(h.fake.apnsRequests.isEmpty && h.fake.fcmRequests.isEmpty)
        }
    }

    @Test("registry: re-registration replaces the token, a late older event changes nothing, deletion is final")
    func registry() async throws {
        try await PushHarness.run { h in
            let user = UUID()
            let (first, second) = (PushHarness.apnsToken(), PushHarness.apnsToken())
            try await h.register(user, device: "iphone", platform: "ios", token: first)
            try await h.register(user, device: "iphone", platform: "ios", token: second)
            let registration: (String) -> JSONValue = { token in
                .object(["userId": .string(user.lowercased), "app": .string("pairly"), "deviceId": .string("iphone"),
                         "platform": .string("ios"), "pushToken": .string(token)])
            }
            // An older registration delivered late does not bring the old token back.
            try await h.identityEvent("device.registered", subject: user, data: registration(first), at: Date().addingTimeInterval(-60))
            try await h.identityEvent("device.removed", subject: user,
                                      data: .object(["userId": .string(user.lowercased), "app": .string("pairly"), "deviceId": .string("iphone")]),
                                      at: Date().addingTimeInterval(-30))
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await h.tokenOf(user, "iphone") == second)

            try await h.identityEvent("user.deleted", subject: user, data: .object(["userId": .string(user.lowercased), "app": .string("pairly")]))
            #expect(try await eventually { try await h.deviceCount(user) == 0 })
            // A registration of the deleted account redelivered afterwards is ignored.
            try await h.identityEvent("device.registered", subject: user, data: registration(second), at: Date())
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await h.deviceCount(user) == 0)
        }
    }
}

@Suite("push catalogue and configuration")
struct PushCatalogueTests {
    @Test("every language has the keys of the apps it serves (Lucky Day is English only) and the placeholders of English")
    func catalogueComplete() throws {
        let catalogue = try Catalogue.bundled()
        let english = try #require(catalogue.languages["en"])
        #expect(catalogue.languages.keys.contains("uk"))
        #expect(english["luckyday.cookie_ready"]?.body == "Your cookie is ready 🍪")
        for (language, messages) in catalogue.languages {
            #expect(Set(messages.keys).isSubset(of: Set(english.keys)), "\(language)")
            // Pairly is localised in its languages; Lucky Day speaks English only (product decision), so it falls back to English.
            if AppID.pairly.notificationLanguages.contains(language) {
                #expect(Set(english.keys.filter { $0.hasPrefix("pairly.") }).isSubset(of: Set(messages.keys)), "\(language)")
            }
            for (key, message) in messages {
                let reference = try #require(english[key])
                #expect(Set(Catalogue.placeholders(in: message.body)) == Set(Catalogue.placeholders(in: reference.body)), "\(language) \(key)")
                #expect(Set(Catalogue.placeholders(in: message.title)) == Set(Catalogue.placeholders(in: reference.title)), "\(language) \(key)")
            }
        }
    }

    @Test("every message a service may send (PushMessage.all) has its text in each language of its app, with exactly its arguments; the catalogue holds no other key")
    func everyMessageHasItsTexts() throws {
        let catalogue = try Catalogue.bundled()
        for message in PushMessage.all {
            #expect(message.key.hasPrefix(message.app.rawValue + "."), "\(message) is not named after its app")
            for language in message.app.notificationLanguages {
                let text = try #require(catalogue.languages[language]?[message.key], "\(message) has no \(language) text")
                let placeholders = Set(Catalogue.placeholders(in: text.title) + Catalogue.placeholders(in: text.body))
                #expect(placeholders == message.arguments, "\(language) \(message): \(placeholders.sorted()) ≠ \(message.arguments.sorted())")
                // Rendering with exactly its arguments works.
                let args = Dictionary(uniqueKeysWithValues: message.arguments.map { ($0, "X") })
                #expect(throws: Never.self) { try catalogue.render(message.key, args: args, locale: language) }
            }
        }
        let known = Set(PushMessage.all.map(\.key))
        for (language, messages) in catalogue.languages {
            #expect(Set(messages.keys).isSubset(of: known), "\(language) has texts no service sends: \(Set(messages.keys).subtracting(known).sorted())")
        }
    }

    @Test("locales fall back to the language, then to English; missing arguments and keys are errors")
    func rendering() throws {
        let catalogue = try Catalogue.bundled()
        #expect(catalogue.language(for: "uk-UA") == "uk")
        #expect(catalogue.language(for: "uk_ua") == "uk")
        #expect(catalogue.language(for: "fr-FR") == "en")
        #expect(catalogue.language(for: nil) == "en")
        #expect(try catalogue.render("pairly.paired", args: ["partnerName": "Bo"], locale: "de").body.contains("Bo"))
        #expect(throws: Catalogue.RenderError.missingArgument(key: "pairly.paired", argument: "partnerName")) {
            try catalogue.render("pairly.paired", args: [:], locale: "en")
        }
        #expect(throws: Catalogue.RenderError.unknownKey("nope")) { try catalogue.render("nope", args: [:], locale: "en") }
    }

    @Test("incomplete or unreadable provider credentials stop start-up naming the variable")
    func configurationErrors() throws {
        let base = ["DATABASE_URL": "postgres://u@127.0.0.1/db"]
        #expect(try PushWorkerConfiguration(settings: .fixed(base)).apns == nil)
        func variable(_ extra: [String: String]) -> String? {
            do { _ = try PushWorkerConfiguration(settings: .fixed(base.merging(extra) { $1 })); return nil } catch let error as ConfigurationError {
                return error.variable
            } catch { return "\(error)" }
        }
        #expect(variable(["APNS_KEY_ID": "K"]) == "APNS_KEY_FILE")
        #expect(variable(["APNS_KEY_FILE": "/nonexistent.p8", "APNS_KEY_ID": "K", "APNS_TEAM_ID": "T"]) == "APNS_KEY_FILE")
        #expect(variable(["APNS_ENVIRONMENT": "staging"]) == "APNS_ENVIRONMENT")
        #expect(variable(["APNS_TOPICS": "pairly"]) == "APNS_TOPICS")
        #expect(variable(["FCM_SERVICE_ACCOUNT_FILE": "/nonexistent.json"]) == "FCM_SERVICE_ACCOUNT_FILE")
        #expect(variable(["PUSH_MAX_ATTEMPTS": "0"]) == "PUSH_MAX_ATTEMPTS")
    }
}

@Suite("push providers in detail")
struct PushProviderDetailTests {
    @Test("the APNs provider token is reused for 50 minutes, then signed anew; invalidation forces a new one")
    func providerTokenLifetime() async throws {
        let time = ManualTime()
        let key = P256.Signing.PrivateKey()
        let signer = try APNsTokenSigner(privateKeyPEM: key.pemRepresentation, keyID: "KEY1234567", teamID: "TEAM123456", clock: .manual(time))
        let first = try await signer.token()
        time.advance(by: 49 * 60)
        #expect(try await signer.token() == first)
        time.advance(by: 2 * 60)
        let second = try await signer.token()
        #expect(second != first)
        await signer.invalidate(second)
        #expect(try await signer.token() != second)
        // What APNs checks: ES256 over header.claims with our key, kid and iss.
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PublicKey(pem: key.publicKey.pemRepresentation), kid: "KEY1234567")
        struct Claims: JWTPayload { var iss: String; var iat: Int; func verify(using algorithm: some JWTAlgorithm) async throws {} }
        let third = try await signer.token()
        let claims = try await keys.verify(third, as: Claims.self)
        #expect(claims.iss == "TEAM123456" && claims.iat == Int(time.now.timeIntervalSince1970))
    }

    @Test("an alert too big for APNs' 4 KB gets a shortened body; the payload stays valid JSON")
    func payloadLimit() throws {
        let long = RenderedNotification(id: UUID(), kind: "pairly.moment_shared", delivery: .alert, title: "New moment",
                                        body: String(repeating: "Дуже довгий текст ", count: 400), collapseKey: nil, ttlSeconds: 60,
                                        expiresAt: Date(), data: ["momentId": UUID().uuidString])
        let payload = try APNsProvider.payload(long)
        #expect(payload.count <= APNsProvider.maxPayloadBytes)
        let json = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        let body = try #require(((json["aps"] as? [String: Any])?["alert"] as? [String: String])?["body"])
        #expect(body.hasSuffix("…") && body.count > 100)
        var huge = long
        huge.delivery = .background
        huge.data = ["blob": String(repeating: "x", count: 5000)]
        #expect(throws: (any Error).self) { try APNsProvider.payload(huge) }
    }

    @Test("APNs ExpiredProviderToken: the worker signs a new token and the same request succeeds")
    func expiredProviderToken() async throws {
        try await PushHarness.run { h in
            let user = UUID()
            let token = PushHarness.apnsToken()
            try await h.register(user, device: "iphone", platform: "ios", token: token)
            h.fake.script(token: token, [.apns(403, "ExpiredProviderToken")])
            try await h.push(.newMoment(to: user))
            #expect(try await eventually { h.fake.apnsRequests.count == 2 })
            try await Task.sleep(for: .milliseconds(200))
            #expect(h.fake.apnsRequests.count == 2)
            #expect(try await h.deadLetters().isEmpty)
            #expect(try await h.deviceCount(user) == 1)
        }
    }
}
