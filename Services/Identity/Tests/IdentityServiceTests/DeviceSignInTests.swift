import Foundation
import HummingbirdTesting
import LanternContracts
import LanternTestSupport
import Testing

@Suite("Device sign-in, profile and devices")
struct DeviceSignInTests {
    @Test("a device id signs into the same account again (reinstall), per app")
    func sameDeviceSameAccount() async throws {
        try await IdentityHarness.run { h in
            let id = UUID().uuidString
            let first = try await h.request(.post, "/v1/auth/device", json: #"{"deviceId":"\#(id)","app":"luckyday"}"#)
            #expect(first.status == .created)
            let a = try first.json(Tokens.self)
            #expect(a.isNewUser == true && a.tokenType == "Bearer" && a.expiresIn == 900)
            let again = try await h.request(.post, "/v1/auth/device", json: #"{"deviceId":"\#(id.lowercased())","app":"luckyday"}"#)
            #expect(again.status == .ok)
            let b = try again.json(Tokens.self)
            #expect(b.user?.id == a.user?.id && b.isNewUser == false)
            let other = try await h.signInDevice(id, app: "astrosvitla")
            #expect(other.user?.id != a.user?.id)
            #expect(other.user?.app == "astrosvitla")
            let created = try await h.event("user.created", subject: try #require(a.user?.id))
            #expect(created?.data["method"]?.stringValue == "device")
        }
    }

    @Test("bad sign-in input is a 4xx problem naming the field", arguments: [
        (#"{"deviceId":"short","app":"luckyday"}"#, 422, "validation_failed", "deviceId"),
        (#"{"deviceId":"00000000-0000-0000-0000-000000000000","app":"luckyday"}"#, 422, "validation_failed", "deviceId"),
        // Ids that are not random: a repeated pattern, a counted sequence, a time-based UUID, a v4-shaped pattern.
        (#"{"deviceId":"abcdeabcdeabcdeabcdeabcdeabcde","app":"luckyday"}"#, 422, "validation_failed", "deviceId"),
        (#"{"deviceId":"0123456789abcdefghijklmnopqrstuv","app":"luckyday"}"#, 422, "validation_failed", "deviceId"),
        (#"{"deviceId":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab","app":"luckyday"}"#, 422, "validation_failed", "deviceId"),
        (#"{"deviceId":"c232ab00-9414-11ec-b3c8-9f6bdeced846","app":"luckyday"}"#, 422, "validation_failed", "deviceId"),
        (#"{"deviceId":"11111111-1111-4111-8111-111111111111","app":"luckyday"}"#, 422, "validation_failed", "deviceId"),
        (#"{"deviceId":"3f2b8a1e-4c5d-4e6f-8a9b-0c1d2e3f4a5b","app":"tinder"}"#, 422, "validation_failed", "app"),
        (#"{"app":"luckyday"}"#, 422, "validation_failed", "deviceId"),
        (#"{"deviceId":42,"app":"luckyday"}"#, 422, "validation_failed", "deviceId"),
        (#"{"deviceId":null,"app":"luckyday"}"#, 422, "validation_failed", "deviceId"),
        (#"{"deviceId":"3f2b8a1e-4c5d-4e6f-8a9b-0c1d2e3f4a5b","app":"pairly"}"#, 403, "sign_in_method_not_allowed", nil),
        (#"{"deviceId":"#, 400, "malformed_json", nil),
        (#"[1,2]"#, 400, "malformed_json", nil),
        ("", 400, "malformed_json", nil),
    ] as [(String, Int, String, String?)])
    func badInput(body: String, status: Int, code: String, field: String?) async throws {
        try await IdentityHarness.run { h in
            let response = try await h.request(.post, "/v1/auth/device", json: body)
            response.expectProblem(status, code, field: field)
        }
    }

    @Test("random ids of every accepted form sign in: UUID v4, 22 base64url characters, 32 hex digits")
    func randomIDs() async throws {
        try await IdentityHarness.run { h in
            for _ in 0..<20 {
                let bytes = (0..<16).map { _ in UInt8.random(in: 0...255) }
                let base64url = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                    .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
                for id in [UUID().uuidString, base64url, bytes.map { String(format: "%02x", $0) }.joined()] {
                    let response = try await h.request(.post, "/v1/auth/device", json: #"{"deviceId":"\#(id)","app":"luckyday"}"#)
                    #expect(response.status == .created, "\(id)")
                }
            }
        }
    }

    @Test("oversize bodies and non-JSON content types are refused")
    func sizeAndType() async throws {
        try await IdentityHarness.run { h in
            let huge = #"{"deviceId":""# + String(repeating: "a", count: 70_000) + #"","app":"luckyday"}"#
            try await h.request(.post, "/v1/auth/device", json: huge).expectProblem(413, "payload_too_large")
            try await h.request(.post, "/v1/auth/device", json: "deviceId=x", headers: [.contentType: "application/x-www-form-urlencoded"])
                .expectProblem(415, "unsupported_media_type")
        }
    }

    @Test("GET, PATCH and DELETE /v1/me, with profile.renamed and user.deleted events")
    func profileLifecycle() async throws {
        try await IdentityHarness.run { h in
            let tokens = try await h.signInDevice()
            let userID = try #require(tokens.user?.id)
            let me = try await h.request(.get, "/v1/me", token: tokens.accessToken)
            #expect(me.status == .ok)
            #expect(try me.json(UserBody.self).signInMethods == ["device"])

            let patched = try await h.request(.patch, "/v1/me", token: tokens.accessToken,
                                              json: #"{"displayName":"  Оля 🌙 ","timeZone":"Europe/Kyiv","locale":"uk-UA"}"#)
            #expect(patched.status == .ok)
            let user = try patched.json(UserBody.self)
            #expect(user.displayName == "Оля 🌙" && user.timeZone == "Europe/Kyiv" && user.locale == "uk-UA")
            let renamed = try await h.event("profile.renamed", subject: userID)
            #expect(renamed?.data["displayName"]?.stringValue == "Оля 🌙")

            try await h.request(.patch, "/v1/me", token: tokens.accessToken, json: #"{"displayName":"   "}"#).expectProblem(422, "validation_failed", field: "displayName")
            // One letter under 32,740 combining marks, and a name of fillers only (VisibleText).
            try await h.request(.patch, "/v1/me", token: tokens.accessToken, json: #"{"displayName":"a\#(String(repeating: "\u{0301}", count: 32_740))"}"#)
                .expectProblem(422, "validation_failed", field: "displayName")
            try await h.request(.patch, "/v1/me", token: tokens.accessToken, json: #"{"displayName":"\#u{3164}"}"#)
                .expectProblem(422, "validation_failed", field: "displayName")
            #expect(try await h.request(.patch, "/v1/me", token: tokens.accessToken, json: #"{"displayName":"👩‍💻 Ada"}"#).status == .ok)
            try await h.request(.patch, "/v1/me", token: tokens.accessToken, json: #"{"displayName":"\#(String(repeating: "x", count: 41))"}"#)
                .expectProblem(422, "validation_failed", field: "displayName")
            try await h.request(.patch, "/v1/me", token: tokens.accessToken, json: #"{"timeZone":"Mars/Olympus"}"#).expectProblem(422, "validation_failed", field: "timeZone")
            // Backward links and names without a slash are tz names too; ICU's custom offsets are not.
            for zone in ["Asia/Calcutta", "Europe/Kiev", "US/Eastern", "Etc/GMT+12", "EST", "Cuba"] {
                #expect(try await h.request(.patch, "/v1/me", token: tokens.accessToken, json: #"{"timeZone":"\#(zone)"}"#).status == .ok, "\(zone)")
            }
            try await h.request(.patch, "/v1/me", token: tokens.accessToken, json: #"{"timeZone":"GMT+05:00"}"#).expectProblem(422, "validation_failed", field: "timeZone")
            try await h.request(.patch, "/v1/me", token: tokens.accessToken, json: #"{"locale":"english please"}"#).expectProblem(422, "validation_failed", field: "locale")
            try await h.request(.patch, "/v1/me", token: tokens.accessToken, json: #"{"displayName":7}"#).expectProblem(422, "validation_failed", field: "displayName")

            let deleted = try await h.request(.delete, "/v1/me", token: tokens.accessToken)
            #expect(deleted.status == .noContent)
            let event = try await h.event("user.deleted", subject: userID)
            #expect(event?.data["app"]?.stringValue == "luckyday")
            try await h.request(.get, "/v1/me", token: tokens.accessToken).expectProblem(401, "account_deleted")
            try await h.request(.post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(tokens.refreshToken)"}"#).expectProblem(401, "invalid_refresh_token")
        }
    }

    @Test("device push registrations: create, update, remove, with events")
    func devices() async throws {
        try await IdentityHarness.run { h in
            let tokens = try await h.signInDevice(app: "symbi")
            let userID = try #require(tokens.user?.id)
            let apns = String(repeating: "ab12", count: 16)
            let put = try await h.request(.put, "/v1/me/devices/iphone-1", token: tokens.accessToken,
                                          json: #"{"platform":"ios","pushToken":"\#(apns)","locale":"en","timeZone":"Asia/Ho_Chi_Minh"}"#)
            #expect(put.status == .created, "\(String(buffer: put.body))")
            let again = try await h.request(.put, "/v1/me/devices/iphone-1", token: tokens.accessToken, json: #"{"platform":"ios","pushToken":"\#(apns)"}"#)
            #expect(again.status == .ok)
            let registered = try await h.event("device.registered", subject: userID)
            #expect(registered?.data["pushToken"]?.stringValue == apns)
            #expect(registered?.data["app"]?.stringValue == "symbi")

            try await h.request(.put, "/v1/me/devices/iphone-1", token: tokens.accessToken, json: #"{"platform":"windows","pushToken":"x"}"#)
                .expectProblem(422, "validation_failed", field: "platform")
            try await h.request(.put, "/v1/me/devices/iphone-1", token: tokens.accessToken, json: #"{"platform":"ios","pushToken":"not-hex"}"#)
                .expectProblem(422, "validation_failed", field: "pushToken")
            try await h.request(.put, "/v1/me/devices/iphone-1", token: tokens.accessToken, json: #"{"platform":"android","pushToken":"fcm:1","app":"pairly"}"#)
                .expectProblem(422, "validation_failed", field: "app")

            #expect(try await h.request(.delete, "/v1/me/devices/iphone-1", token: tokens.accessToken).status == .noContent)
            try await h.request(.delete, "/v1/me/devices/iphone-1", token: tokens.accessToken).expectProblem(404, "device_not_found")
            #expect(try await h.event("device.removed", subject: userID) != nil)
        }
    }

    @Test("a push token moves to the account that registers it last")
    func pushTokenMoves() async throws {
        try await IdentityHarness.run { h in
            let first = try await h.signInDevice(app: "roastmelater")
            let second = try await h.signInDevice(app: "roastmelater")
            let body = #"{"platform":"android","pushToken":"fcm-token-shared-by-one-phone"}"#
            #expect(try await h.request(.put, "/v1/me/devices/phone", token: first.accessToken, json: body).status == .created)
            #expect(try await h.request(.put, "/v1/me/devices/phone", token: second.accessToken, json: body).status == .created)
            #expect(try await h.event("device.removed", subject: try #require(first.user?.id)) != nil)
        }
    }
}

@Suite("Sessions and access tokens")
struct SessionTests {
    /// The `sid` of an access token (its payload read as JSON, as any JWT library would).
    static func session(of token: String) -> String? {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var payload = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
        guard let data = Data(base64Encoded: payload), let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return (json["sid"] as? String)?.lowercased()
    }

    @Test("refresh rotates; a spent refresh token revokes the whole session")
    func rotationAndReuse() async throws {
        try await IdentityHarness.run { h in
            let tokens = try await h.signInDevice()
            let rotated = try await h.request(.post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(tokens.refreshToken)"}"#)
            #expect(rotated.status == .ok)
            let next = try rotated.json(Tokens.self)
            #expect(next.refreshToken != tokens.refreshToken)
            #expect(try await h.request(.get, "/v1/me", token: next.accessToken).status == .ok)

            try await h.request(.post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(tokens.refreshToken)"}"#).expectProblem(401, "refresh_token_reused")
            // Its sockets end with it, on every gateway.
            let session = try #require(Self.session(of: tokens.accessToken))
            #expect(try await eventually { try await h.disconnects().contains { $0.sessionIds == [session] && $0.reason == "refresh_token_reused" } })
            // The thief's reuse ended the session for everyone holding its tokens.
            try await h.request(.post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(next.refreshToken)"}"#).expectProblem(401, "session_revoked")
            try await h.request(.post, "/v1/auth/refresh", json: #"{"refreshToken":"lrt_nonsense"}"#).expectProblem(401, "invalid_refresh_token")
            try await h.request(.post, "/v1/auth/refresh", json: #"{"refreshToken":5}"#).expectProblem(422, "validation_failed", field: "refreshToken")
        }
    }

    @Test("logout ends the session")
    func logout() async throws {
        try await IdentityHarness.run { h in
            let tokens = try await h.signInDevice()
            #expect(try await h.request(.post, "/v1/auth/logout", token: tokens.accessToken).status == .noContent)
            // The session's sockets are closed, on every gateway (a second logout changes nothing and says nothing).
            let session = try #require(Self.session(of: tokens.accessToken))
            #expect(try await eventually { try await h.disconnects().contains { $0.sessionIds == [session] && $0.reason == "logged_out" && $0.userIds.isEmpty } })
            #expect(try await h.request(.post, "/v1/auth/logout", token: tokens.accessToken).status == .noContent)
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await h.disconnects().filter { $0.sessionIds == [session] }.count == 1)
            try await h.request(.post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(tokens.refreshToken)"}"#).expectProblem(401, "session_revoked")
            try await h.request(.post, "/v1/auth/logout").expectProblem(401, "missing_token")
        }
    }

    @Test("missing, malformed, forged and expired access tokens are 401s")
    func badAccessTokens() async throws {
        try await IdentityHarness.run { h in
            let tokens = try await h.signInDevice()
            try await h.request(.get, "/v1/me").expectProblem(401, "missing_token")
            try await h.request(.get, "/v1/me", headers: [.authorization: "Basic abc"]).expectProblem(401, "invalid_token")
            try await h.request(.get, "/v1/me", token: "not.a.jwt").expectProblem(401, "malformed_token")
            let parts = tokens.accessToken.split(separator: ".")
            let forged = parts[0] + "." + parts[1] + "." + String(parts[2].reversed())
            try await h.request(.get, "/v1/me", token: String(forged)).expectProblem(401, "invalid_token")
            let none = try FakeIdentityProvider.unsignedToken(claims: ["sub": tokens.user?.id ?? "", "aud": "lantern", "iss": "lantern-identity",
                                                                       "exp": Int(Date().timeIntervalSince1970) + 600, "iat": Int(Date().timeIntervalSince1970)])
            try await h.request(.get, "/v1/me", token: none).expectProblem(401, "invalid_token")
            h.time.advance(by: 16 * 60)
            try await h.request(.get, "/v1/me", token: tokens.accessToken).expectProblem(401, "token_expired")
        }
    }

    @Test("the JWK set publishes the key that signs access tokens")
    func jwks() async throws {
        try await IdentityHarness.run { h in
            let tokens = try await h.signInDevice()
            let response = try await h.request(.get, "/.well-known/jwks.json")
            #expect(response.status == .ok)
            struct Set: Decodable { var keys: [Key]; struct Key: Decodable { var kty, crv, kid, alg, x: String } }
            let set = try response.json(Set.self)
            let header = try JSONSerialization.jsonObject(with: try #require(Data(base64URL: String(tokens.accessToken.split(separator: ".")[0])))) as? [String: String]
            #expect(set.keys.count == 1)
            #expect(set.keys.first?.kid == header?["kid"])
            #expect(set.keys.first?.alg == "EdDSA" && set.keys.first?.crv == "Ed25519")
        }
    }
}

extension Data {
    init?(base64URL: String) {
        var s = base64URL.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        self.init(base64Encoded: s)
    }
}
