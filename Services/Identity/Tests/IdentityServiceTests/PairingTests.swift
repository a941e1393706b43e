import Foundation
import HummingbirdTesting
import LanternContracts
import LanternEvents
import LanternTestSupport
import Testing

@Suite("Pairly pairing")
struct PairingTests {
    /// Pairly accounts need Google or Apple in production; device accounts keep these tests short.
    static let pairlyDevices = ["DEVICE_SIGNIN_APPS": "pairly,luckyday"]

    struct InviteBody: Decodable { var code: String; var expiresAt: String }
    struct PartnershipBody: Decodable { var pairingId: String; var partnerId: String; var partnerName: String?; var since: String }

    func named(_ h: IdentityHarness, _ name: String) async throws -> Tokens {
        let tokens = try await h.signInDevice(app: "pairly")
        #expect(try await h.request(.patch, "/v1/me", token: tokens.accessToken, json: #"{"displayName":"\#(name)"}"#).status == .ok)
        return tokens
    }

    @Test("an invite code is 6 readable characters, valid 24 h, and asking again returns the live one")
    func inviteCode() async throws {
        try await IdentityHarness.run(extra: Self.pairlyDevices) { h in
            let a = try await named(h, "Ana")
            let first = try await h.request(.post, "/v1/pairing/invites", token: a.accessToken)
            #expect(first.status == .created)
            let invite = try first.json(InviteBody.self)
            #expect(invite.code.count == 6)
            #expect(invite.code.allSatisfy { "ABCDEFGHJKMNPQRSTUVWXYZ23456789".contains($0) })
            let again = try await h.request(.post, "/v1/pairing/invites", token: a.accessToken)
            #expect(again.status == .ok)
            #expect(try again.json(InviteBody.self).code == invite.code)
            h.time.advance(by: 24 * 3600 + 1)
            let fresh = try await h.request(.post, "/v1/pairing/invites", token: try await h.refreshed(a).accessToken)
            #expect(fresh.status == .created)
            #expect(try fresh.json(InviteBody.self).code != invite.code)
        }
    }

    @Test("joining pairs both users, announces it, and kills the code")
    func join() async throws {
        try await IdentityHarness.run(extra: Self.pairlyDevices) { h in
            let a = try await named(h, "Ana")
            let b = try await named(h, "Bohdan")
            let code = try await h.request(.post, "/v1/pairing/invites", token: a.accessToken).json(InviteBody.self).code
            let joined = try await h.request(.post, "/v1/pairing/join", token: b.accessToken, json: #"{"code":"  \#(code.lowercased()) "}"#)
            #expect(joined.status == .created, "\(String(buffer: joined.body))")
            let seenByB = try joined.json(PartnershipBody.self)
            #expect(seenByB.partnerId == a.user?.id && seenByB.partnerName == "Ana")
            let seenByA = try await h.request(.get, "/v1/pairing", token: a.accessToken).json(PartnershipBody.self)
            #expect(seenByA.partnerId == b.user?.id && seenByA.partnerName == "Bohdan" && seenByA.pairingId == seenByB.pairingId)

            let event = try await h.event("pairing.established", subject: try #require(b.user?.id))
            #expect(event?.data["userIds"] == .array([.string(a.user?.id ?? ""), .string(b.user?.id ?? "")]))
            #expect(event?.data["invitedBy"]?.stringValue == a.user?.id)
            // Both partners are told by push, in the same transaction (outbox), each with the other's name.
            #expect(try await eventually { try await h.pushJobs().count == 2 })
            let pushes = try await h.pushJobs()
            #expect(Set(pushes.map(\.userId)) == Set([a.user?.id, b.user?.id].compactMap { $0 }))
            #expect(pushes.allSatisfy { $0.kind == "pairly.paired" && $0.delivery == .alert && $0.messageKey == "pairly.paired" && $0.app == .pairly })
            #expect(pushes.first { $0.userId == a.user?.id }?.args == ["partnerName": "Bohdan"])
            #expect(pushes.first { $0.userId == b.user?.id }?.args == ["partnerName": "Ana"])

            // A rename reaches the partner: the event names them.
            #expect(try await h.request(.patch, "/v1/me", token: a.accessToken, json: #"{"displayName":"Ana B."}"#).status == .ok)
            var renamed: EventEnvelope?
            for _ in 0..<200 where renamed == nil {
                renamed = try await h.events().first { $0.type == "profile.renamed" && $0.data["displayName"]?.stringValue == "Ana B." }
                if renamed == nil { try await Task.sleep(for: .milliseconds(25)) }
            }
            #expect(renamed?.data["partnerId"]?.stringValue == b.user?.id)

            let c = try await named(h, "Chris")
            try await h.request(.post, "/v1/pairing/join", token: c.accessToken, json: #"{"code":"\#(code)"}"#).expectProblem(409, "invite_code_used")
            try await h.request(.post, "/v1/pairing/invites", token: a.accessToken).expectProblem(409, "already_paired")
            let cCode = try await h.request(.post, "/v1/pairing/invites", token: c.accessToken).json(InviteBody.self).code
            try await h.request(.post, "/v1/pairing/join", token: a.accessToken, json: #"{"code":"\#(cCode)"}"#).expectProblem(409, "already_paired")

            // D's code dies when D pairs with C; E is told why.
            let d = try await named(h, "Dana")
            let e = try await named(h, "Emil")
            let dCode = try await h.request(.post, "/v1/pairing/invites", token: d.accessToken).json(InviteBody.self).code
            #expect(try await h.request(.post, "/v1/pairing/join", token: d.accessToken, json: #"{"code":"\#(cCode)"}"#).status == .created)
            try await h.request(.post, "/v1/pairing/join", token: e.accessToken, json: #"{"code":"\#(dCode)"}"#).expectProblem(409, "partner_already_paired")

            // A deleted account's still-valid token gets 401, not a server error.
            #expect(try await h.request(.delete, "/v1/me", token: e.accessToken).status == .noContent)
            try await h.request(.post, "/v1/pairing/invites", token: e.accessToken).expectProblem(401, "account_deleted")
        }
    }

    @Test("unknown, malformed, own and expired codes each get their own problem")
    func badCodes() async throws {
        try await IdentityHarness.run(extra: Self.pairlyDevices) { h in
            let a = try await named(h, "Ana")
            let b = try await named(h, "Bohdan")
            try await h.request(.post, "/v1/pairing/join", token: b.accessToken, json: #"{"code":"ZZZZZZ"}"#).expectProblem(404, "invite_code_not_found")
            try await h.request(.post, "/v1/pairing/join", token: b.accessToken, json: #"{"code":"O0I1AB"}"#).expectProblem(422, "invite_code_malformed", field: "code")
            try await h.request(.post, "/v1/pairing/join", token: b.accessToken, json: #"{"code":42}"#).expectProblem(422, "validation_failed", field: "code")
            try await h.request(.post, "/v1/pairing/join", token: b.accessToken, json: #"{}"#).expectProblem(422, "validation_failed", field: "code")
            let code = try await h.request(.post, "/v1/pairing/invites", token: a.accessToken).json(InviteBody.self).code
            try await h.request(.post, "/v1/pairing/join", token: a.accessToken, json: #"{"code":"\#(code)"}"#).expectProblem(422, "invite_code_own", field: "code")
            h.time.advance(by: 24 * 3600 + 1)
            let later = try await h.refreshed(b)
            try await h.request(.post, "/v1/pairing/join", token: later.accessToken, json: #"{"code":"\#(code)"}"#).expectProblem(410, "invite_code_expired")
            try await h.request(.get, "/v1/pairing", token: later.accessToken).expectProblem(404, "not_paired")
            let other = try await h.signInDevice(app: "luckyday")
            try await h.request(.post, "/v1/pairing/invites", token: other.accessToken).expectProblem(403, "pairing_not_available")
        }
    }

    @Test("disconnecting unpairs both and announces it; deleting an account does too")
    func dissolve() async throws {
        try await IdentityHarness.run(extra: Self.pairlyDevices) { h in
            func pair(_ x: Tokens, _ y: Tokens) async throws {
                let code = try await h.request(.post, "/v1/pairing/invites", token: x.accessToken).json(InviteBody.self).code
                #expect(try await h.request(.post, "/v1/pairing/join", token: y.accessToken, json: #"{"code":"\#(code)"}"#).status == .created)
            }
            let a = try await named(h, "Ana")
            let b = try await named(h, "Bohdan")
            try await pair(a, b)
            #expect(try await h.request(.delete, "/v1/pairing", token: b.accessToken).status == .noContent)
            try await h.request(.get, "/v1/pairing", token: a.accessToken).expectProblem(404, "not_paired")
            try await h.request(.delete, "/v1/pairing", token: a.accessToken).expectProblem(404, "not_paired")
            let ended = try await h.event("pairing.dissolved", subject: try #require(b.user?.id))
            #expect(ended?.data["reason"]?.stringValue == "disconnected")
            // Only the partner who did not disconnect gets a push.
            #expect(try await eventually { try await h.pushJobs().contains { $0.kind == "pairly.partner_disconnected" } })
            // Both widgets are told at once, silently, to clear the photo (Pairly 7.5), though the apps are closed.
            #expect(try await eventually { try await h.pushJobs().filter { $0.kind == "pairly.pairing_ended" }.count == 2 })
            let silent = try await h.pushJobs().filter { $0.kind == "pairly.pairing_ended" }
            #expect(Set(silent.map(\.userId)) == Set([a.user?.id, b.user?.id].compactMap { $0 }) && silent.allSatisfy { $0.delivery == .background })
            let told = try await h.pushJobs().filter { $0.kind == "pairly.partner_disconnected" }
            #expect(told.count == 1 && told.first?.userId == a.user?.id && told.first?.args == ["partnerName": "Bohdan"])

            // Pair again, then one of them deletes the account.
            try await pair(b, a)
            #expect(try await h.request(.delete, "/v1/me", token: a.accessToken).status == .noContent)
            try await h.request(.get, "/v1/pairing", token: b.accessToken).expectProblem(404, "not_paired")
            let gone = try await h.event("pairing.dissolved", subject: try #require(a.user?.id))
            #expect(gone?.data["reason"]?.stringValue == "account_deleted")
            #expect(try await eventually { try await h.pushJobs().filter { $0.kind == "pairly.partner_disconnected" }.count == 2 })
            #expect(try await h.pushJobs().last { $0.kind == "pairly.partner_disconnected" }?.userId == b.user?.id)
        }
    }
}
