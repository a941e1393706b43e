import Foundation
@testable import IdentityService
import LanternCore
import LanternDatabase
import LanternTestSupport
import PostgresNIO
import Testing

@Suite("Identity housekeeping")
struct HousekeepingTests {
    @Test("spent refresh tokens and dead invite codes are deleted after a week; live ones stay")
    func purges() async throws {
        try await IdentityHarness.run(extra: ["DEVICE_SIGNIN_APPS": "pairly"]) { h in
            let tokens = try await h.signInDevice(app: "pairly")
            let next = try await h.refreshed(tokens)  // the first token is now spent
            #expect(try await h.request(.post, "/v1/pairing/invites", token: next.accessToken).status == .created)
            h.time.advance(by: 8 * 86_400 + 3600)
            try await TestEnvironment.withPostgres(h.databaseURL) { client in
                let housekeeping = Housekeeping(client: client, rules: IdentityDatabase.housekeeping, clock: .manual(h.time), logger: TestEnvironment.logger)
                let deleted = await housekeeping.runOnce()
                #expect(deleted["refresh_tokens"] == 1)
                #expect(deleted["pairing_invites"] == 1)
                #expect(deleted["sessions"] == 0)
            }
            // The session lives on with its unspent token; the purged one is simply unknown now.
            #expect(try await h.request(.post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(next.refreshToken)"}"#).status == .ok)
            try await h.request(.post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(tokens.refreshToken)"}"#).expectProblem(401, "invalid_refresh_token")
        }
    }
}
