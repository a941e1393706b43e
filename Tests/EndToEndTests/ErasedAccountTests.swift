import Foundation
import LanternRedis
import LanternTestSupport
import NIOHTTP1
import PostgresNIO
import Testing

/// A write route of a service that takes app tokens, as an app calls it.
struct AccountWrite: Sendable, CustomTestStringConvertible {
    var service: String
    var app: String
    var method: HTTPMethod
    var path: String
    var json: String?
    var bytes: [UInt8]?
    var contentType = "application/json"
    var idempotencyKey = false
    /// The service's schema when the write reaches a store that the erasure fence guards (`ErasedUsers`), even for a
    /// token checked before the account was marked deleted: such a write must find the user erased and store nothing.
    /// nil: the route refuses earlier for other reasons (no profile, no pairing) or writes nothing.
    var fencedSchema: String?

    var testDescription: String { "\(service): \(method) \(path)" }

    /// Every service with a write route, each app of content, and a read of each kind that must not answer a fresh
    /// account's defaults.
    static let all: [AccountWrite] = [
        AccountWrite(service: "identity", app: "luckyday", method: .PATCH, path: "/v1/me", json: #"{"displayName":"Gone"}"#, fencedSchema: "identity"),
        AccountWrite(service: "identity", app: "luckyday", method: .PUT, path: "/v1/me/devices/phone-1",
                     json: #"{"platform":"ios","pushToken":"\#(String(repeating: "ab", count: 32))"}"#, fencedSchema: "identity"),
        AccountWrite(service: "media", app: "pairly", method: .POST, path: "/v1/moments", bytes: Array("not a photo".utf8), contentType: "image/jpeg"),
        AccountWrite(service: "content", app: "luckyday", method: .PUT, path: "/v1/fortunes/profile",
                     json: #"{"birth":{"date":"1990-05-17","time":"14:35","place":{"id":703448}},"timeZone":"Europe/Rome"}"#, fencedSchema: "content"),
        AccountWrite(service: "content", app: "luckyday", method: .POST, path: "/v1/fortunes/today/break", idempotencyKey: true),
        AccountWrite(service: "content", app: "astrosvitla", method: .POST, path: "/v1/reports/purchases", json: #"{"signedTransaction":"x"}"#),
        AccountWrite(service: "content", app: "roastmelater", method: .POST, path: "/v1/roasts",
                     json: #"{"category":"tech","spice":2,"language":"en","timeZone":"Asia/Ho_Chi_Minh"}"#, idempotencyKey: true, fencedSchema: "content"),
        AccountWrite(service: "content", app: "roastmelater", method: .PUT, path: "/v1/widgets/roastmelater/settings",
                     json: #"{"categories":["tech"],"maxSpice":3,"language":"en","timeZone":"Asia/Ho_Chi_Minh"}"#, fencedSchema: "content"),
        AccountWrite(service: "gamification", app: "roastmelater", method: .POST, path: "/v1/gamification/check-ins",
                     json: #"{"timeZone":"Asia/Ho_Chi_Minh"}"#, idempotencyKey: true, fencedSchema: "gamification"),
        AccountWrite(service: "health-brain", app: "symbi", method: .POST, path: "/v1/symbi/metrics",
                     json: #"{"timeZone":"Asia/Ho_Chi_Minh","days":[{"date":"\#(today)","source":"healthkit","steps":9000}]}"#, fencedSchema: "health"),
        AccountWrite(service: "health-brain", app: "symbi", method: .POST, path: "/v1/symbi/sessions", json: #"{"minutes":3}"#,
                     idempotencyKey: true, fencedSchema: "health"),
        AccountWrite(service: "health-brain", app: "symbi", method: .GET, path: "/v1/symbi/state"),
        AccountWrite(service: "health-brain", app: "symbi", method: .GET, path: "/v1/symbi/export"),
        AccountWrite(service: "astrology", app: "astrosvitla", method: .POST, path: "/v1/astrology/charts/natal",
                     json: #"{"date":"2000-01-01","time":"12:00","place":{"latitude":0,"longitude":0,"timeZone":"UTC"}}"#),
    ]

    static var fenced: [AccountWrite] { all.filter { $0.fencedSchema != nil } }

    static var today: String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Asia/Ho_Chi_Minh") ?? .gmt
        let parts = calendar.dateComponents([.year, .month, .day], from: Date())
        return String(format: "%04d-%02d-%02d", parts.year ?? 2026, parts.month ?? 1, parts.day ?? 1)
    }

    func send(_ stack: Stack, token: String, service: String? = nil) async throws -> Stack.Reply {
        try await stack.call(method, path, token: token, json: json, contentType: contentType, bytes: bytes,
                             headers: idempotencyKey ? [("Idempotency-Key", UUID().uuidString)] : [], service: service)
    }
}

extension EndToEnd.Shared {
@Suite("A deleted account stays deleted (#44 item 1)", .serialized)
struct ErasedAccountTests {
    /// A fresh device account of `app`, deleted at once (`DELETE /v1/me` answered 204): its token and id.
    static func deletedAccount(_ stack: Stack, app: String) async throws -> (token: String, id: String) {
        let signIn = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"\#(app)"}"#)
        #expect(signIn.status == 201, "\(signIn.text)")
        let tokens = try signIn.json(TokenReply.self)
        #expect(try await stack.call(.DELETE, "/v1/me", token: tokens.accessToken).status == 204)
        return (tokens.accessToken, try #require(tokens.user?.id))
    }

    @Test("from the moment DELETE /v1/me answers, every service refuses the account's token (401 account_deleted)",
          arguments: AccountWrite.all)
    func tokenRefusedEverywhere(_ write: AccountWrite) async throws {
        try await Stack.shared { stack in
            let (token, _) = try await Self.deletedAccount(stack, app: write.app)
            // No wait: neither the gateway nor the service itself may take the token once the deletion has answered,
            // whatever its `user.deleted` consumer has done yet.
            for service in [nil, write.service] {
                let reply = try await write.send(stack, token: token, service: service)
                #expect(reply.status == 401 && reply.problemCode == "account_deleted", "\(service ?? "gateway"): \(reply.status) \(reply.text)")
            }
        }
    }

    @Test("a write whose token was checked before the deletion stores nothing once the service has erased the account",
          arguments: AccountWrite.fenced)
    func writeAfterErasureStoresNothing(_ write: AccountWrite) async throws {
        try await Stack.shared { stack in
            let (token, id) = try await Self.deletedAccount(stack, app: write.app)
            // As if every check of the token had happened before identity marked the account: the mark goes.
            let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
            try await redis.send(["DEL", stack.streams.erasedAccount(id)])
            await redis.shutdown()
            let schema = try #require(write.fencedSchema)
            if schema != "identity" {
                // The service's consumer has erased the user (its tombstone is there).
                #expect(try await eventually {
                    try await TestEnvironment.withPostgres(stack.databaseURL) { client in
                        let rows = try await client.query(PostgresQuery(unsafeSQL: """
                            SELECT count(*)::int FROM \(schema).erased_users WHERE user_hash = sha256(convert_to('\(id)', 'UTF8'))
                            """))
                        for try await count in rows.decode(Int.self) { return count == 1 }
                        return false
                    }
                }, "\(schema) never erased \(id)")
            }
            let reply = try await write.send(stack, token: token)
            #expect(reply.status == 401 && reply.problemCode == "account_deleted", "\(reply.status) \(reply.text)")
            // Nothing names the account, but push-worker's record of deleted users (it drops their late registrations).
            var left: [String] = []
            for _ in 0..<50 {
                left = try await stack.columnsNaming(id).filter { $0 != "push.deleted_users.user_id" }
                if left.isEmpty { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(left.isEmpty, "still naming the deleted account: \(left)")
        }
    }
}
}
