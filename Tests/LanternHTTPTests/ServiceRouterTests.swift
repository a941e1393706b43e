import Foundation
import Hummingbird
import HummingbirdTesting
import LanternCore
import LanternHTTP
import LanternTestSupport
import LanternTokens
import NIOCore
import Testing

/// An error whose text must never reach a client.
private struct LeakyError: Error, CustomStringConvertible {
    var description: String { "connection to db failed: password=hunter2" }
}

private struct CheckFailed: Error, CustomStringConvertible {
    var description: String { "connection refused" }
}

private struct Person: Decodable {
    struct Pet: Decodable { var legs: Int }
    var name: String
    var age: Int
    var pet: Pet?
}

/// The shared router with a few routes that fail in every way a handler can.
private func operations(_ readiness: ReadinessChecks) -> some ApplicationProtocol {
    Application(router: ServiceRouter.operations(readiness: readiness), logger: TestEnvironment.logger)
}

private func makeApplication(configure: (Router<LanternRequestContext>) -> Void = { _ in }) -> some ApplicationProtocol {
    let router = ServiceRouter.make()
    router.get("/problem") { _, _ -> Response in throw Problem.conflict("That name is taken.", code: "name_taken") }
    router.get("/token") { _, _ -> Response in throw TokenError("token_expired", "The access token has expired; refresh it.") }
    router.get("/keys") { _, _ -> Response in throw KeySetUnavailable(reason: "identity is down") }
    router.get("/boom") { _, _ -> Response in throw LeakyError() }
    router.get("/ok") { _, context in context.requestID }
    router.post("/people") { request, context -> String in
        let person = try await request.decodeJSON(as: Person.self, context: context)
        return "\(person.name) \(person.age) \(person.pet?.legs ?? -1)"
    }
    configure(router)
    return Application(router: router, logger: TestEnvironment.logger)
}

private func problem(_ response: TestResponse) throws -> Problem {
    try JSONDecoder().decode(Problem.self, from: Data(response.body.readableBytesView))
}

private func text(_ response: TestResponse) -> String { String(buffer: response.body) }

private func postJSON(_ client: some TestClientProtocol, _ body: String, contentType: String = "application/json") async throws -> TestResponse {
    try await client.execute(uri: "/people", method: .post, headers: [.contentType: contentType], body: ByteBuffer(string: body))
}

@Suite("LanternHTTP: the shared router, problem responses, request ids, health, JSON bodies and access tokens")
struct ServiceRouterTests {
    @Test("a thrown Problem is answered with its status, Content-Type application/problem+json and its code")
    func problemResponse() async throws {
        try await makeApplication().test(.router) { client in
            let response = try await client.execute(uri: "/problem", method: .get)
            #expect(response.status == .conflict)
            #expect(response.headers[.contentType] == "application/problem+json")
            let body = try problem(response)
            #expect(body.code == "name_taken")
            #expect(body.status == 409)
            #expect(body.detail == "That name is taken.")
            #expect(body.type == "https://lantern.dev/problems/name-taken")
            // Problem responses come from inside the request-id middleware, so they carry the id too.
            #expect(response.headers[.requestID]?.isEmpty == false)
        }
    }

    @Test("a ProblemConvertible error becomes its problem: a TokenError is a 401 with its code, KeySetUnavailable a 503")
    func problemConvertible() async throws {
        try await makeApplication().test(.router) { client in
            let token = try await client.execute(uri: "/token", method: .get)
            #expect(token.status == .unauthorized)
            #expect(token.headers[.contentType] == "application/problem+json")
            #expect(try problem(token).code == "token_expired")

            let keys = try await client.execute(uri: "/keys", method: .get)
            #expect(keys.status == .serviceUnavailable)
            #expect(try problem(keys).code == "keys_unavailable")
        }
    }

    @Test("an unknown route is a 404 problem with code route_not_found")
    func unknownRoute() async throws {
        try await makeApplication().test(.router) { client in
            let response = try await client.execute(uri: "/no/such/route", method: .get)
            #expect(response.status == .notFound)
            #expect(response.headers[.contentType] == "application/problem+json")
            #expect(try problem(response).code == "route_not_found")
        }
    }

    @Test("any other error is a 500 internal_error naming the request id and not leaking the error's text")
    func internalErrorLeaksNothing() async throws {
        try await makeApplication().test(.router) { client in
            let response = try await client.execute(uri: "/boom", method: .get, headers: [.requestID: "req-500"])
            #expect(response.status == .internalServerError)
            #expect(response.headers[.contentType] == "application/problem+json")
            let body = try problem(response)
            #expect(body.code == "internal_error")
            #expect(body.detail?.contains("req-500") == true)
            #expect(!text(response).contains("hunter2"))
            #expect(!text(response).contains("LeakyError"))
        }
    }

    @Test("X-Request-Id is echoed when the caller sends a sane one and generated (a fresh UUID) otherwise")
    func requestID() async throws {
        try await makeApplication().test(.router) { client in
            let echoed = try await client.execute(uri: "/ok", method: .get, headers: [.requestID: "abc-123_XYZ"])
            #expect(echoed.headers[.requestID] == "abc-123_XYZ")
            #expect(text(echoed) == "abc-123_XYZ")  // handlers see the same id in their context

            let first = try await client.execute(uri: "/ok", method: .get)
            let second = try await client.execute(uri: "/ok", method: .get)
            let generated = try #require(first.headers[.requestID])
            #expect(UUID(uuidString: generated) != nil)
            #expect(generated == generated.lowercased())
            #expect(text(first) == generated)
            #expect(second.headers[.requestID] != generated)

            // Ids with characters outside [A-Za-z0-9_-] or longer than 128 are replaced, not echoed into logs.
            for insane in ["has space", "semi;colon", String(repeating: "a", count: 129)] {
                let response = try await client.execute(uri: "/ok", method: .get, headers: [.requestID: insane])
                let id = try #require(response.headers[.requestID])
                #expect(id != insane)
                #expect(UUID(uuidString: id) != nil)
            }
            let longest = String(repeating: "b", count: 128)
            #expect(try await client.execute(uri: "/ok", method: .get, headers: [.requestID: longest]).headers[.requestID] == longest)
        }
    }

    @Test("/health/live answers 200 with status ok on both ports; readiness and metrics are on the operations port only")
    func live() async throws {
        var readiness = ReadinessChecks()
        readiness.add("postgres") { throw CheckFailed() }  // liveness does not depend on dependencies
        try await makeApplication().test(.router) { client in
            let response = try await client.execute(uri: "/health/live", method: .get)
            #expect(response.status == .ok)
            #expect(try JSONDecoder().decode([String: String].self, from: Data(response.body.readableBytesView)) == ["status": "ok"])
            for path in ["/health/ready", "/metrics", "/health"] {
                #expect(try await client.execute(uri: path, method: .get).status == .notFound, "\(path) on the API port")
            }
        }
        try await operations(readiness).test(.router) { client in
            #expect(try await client.execute(uri: "/health/live", method: .get).status == .ok)
            let metrics = try await client.execute(uri: "/metrics", method: .get)
            #expect(metrics.status == .ok && metrics.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
        }
    }

    @Test("/health/ready is 503 naming the failing check when one throws, and 200 when all checks pass")
    func ready() async throws {
        var failing = ReadinessChecks()
        failing.add("postgres") { throw CheckFailed() }
        failing.add("redis") {}
        try await operations(failing).test(.router) { client in
            let response = try await client.execute(uri: "/health/ready", method: .get)
            #expect(response.status == .serviceUnavailable)
            let report = try JSONDecoder().decode(ReadinessChecks.Report.self, from: Data(response.body.readableBytesView))
            #expect(report.status == "unavailable")
            #expect(report.checks["redis"] == "ok")
            let postgres = try #require(report.checks["postgres"])
            #expect(postgres.hasPrefix("failing"))
            #expect(postgres.contains("connection refused"))
        }

        var passing = ReadinessChecks()
        passing.add("postgres") {}
        passing.add("redis") {}
        try await operations(passing).test(.router) { client in
            let response = try await client.execute(uri: "/health/ready", method: .get)
            #expect(response.status == .ok)
            let report = try JSONDecoder().decode(ReadinessChecks.Report.self, from: Data(response.body.readableBytesView))
            #expect(report.status == "ok")
            #expect(report.checks == ["postgres": "ok", "redis": "ok"])
        }
    }

    @Test("decodeJSON decodes a valid body and answers 422 validation_failed naming the field for a wrong type, a missing field and a null")
    func jsonFieldErrors() async throws {
        try await makeApplication().test(.router) { client in
            let valid = try await postJSON(client, #"{"name":"Ana","age":30,"pet":{"legs":4}}"#)
            #expect(valid.status == .ok)
            #expect(text(valid) == "Ana 30 4")

            let cases: [(body: String, field: String, message: String)] = [
                (#"{"name":5,"age":30}"#, "name", "must be a string"),
                (#"{"name":"Ana"}"#, "age", "is required"),
                (#"{"name":"Ana","age":30,"pet":{"legs":"four"}}"#, "pet.legs", "must be an integer"),
                (#"{"name":null,"age":30}"#, "name", "must be a string, not null"),
            ]
            for item in cases {
                let response = try await postJSON(client, item.body)
                #expect(response.status == .unprocessableContent, "\(item.body)")
                #expect(response.headers[.contentType] == "application/problem+json")
                let body = try problem(response)
                #expect(body.code == "validation_failed", "\(item.body)")
                #expect(body.errors == [Problem.FieldError(field: item.field, message: item.message)], "\(item.body)")
            }
        }
    }

    @Test("decodeJSON answers 400 malformed_json for broken JSON, an empty body, a non-object and null, and 415 for a non-JSON content type")
    func jsonMalformed() async throws {
        try await makeApplication().test(.router) { client in
            for body in [#"{"name": "Ana", "#, "", "[1, 2]", "not json", "null"] {
                let response = try await postJSON(client, body)
                #expect(response.status == .badRequest, "\(body)")
                #expect(try problem(response).code == "malformed_json", "\(body)")
            }
            let plain = try await postJSON(client, #"{"name":"Ana","age":30}"#, contentType: "text/plain")
            #expect(plain.status == .unsupportedMediaType)
            #expect(try problem(plain).code == "unsupported_media_type")
        }
    }

    @Test("only application/json and +json types are JSON: a browser's cross-origin text/plain;json is a 415 (issue #23 item 4, DNS rebinding)")
    func jsonMediaTypes() async throws {
        try await makeApplication().test(.router) { client in
            let body = #"{"name":"Ana","age":30}"#
            for type in ["application/json", "application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json"] {
                #expect(try await postJSON(client, body, contentType: type).status == .ok, "\(type)")
            }
            for type in ["text/plain;json", "text/plain; charset=json", "application/jsonx", "text/json", "application/x-www-form-urlencoded"] {
                let response = try await postJSON(client, body, contentType: type)
                #expect(response.status == .unsupportedMediaType, "\(type)")
            }
        }
    }

    @Test("decodeJSON answers 413 payload_too_large for a body over the context's 64 KiB limit")
    func jsonTooLarge() async throws {
        try await makeApplication().test(.router) { client in
            let padding = String(repeating: "x", count: 64 * 1024)
            let response = try await postJSON(client, #"{"name":"\#(padding)","age":30}"#)
            #expect(response.status == .contentTooLarge)
            #expect(response.headers[.contentType] == "application/problem+json")
            #expect(try problem(response).code == "payload_too_large")

            // Just under the limit still decodes.
            let fits = String(repeating: "y", count: 64 * 1024 - 100)
            let ok = try await postJSON(client, #"{"name":"\#(fits)","age":30}"#)
            #expect(ok.status == .ok)
        }
    }

    @Test("RequireAccessToken admits a valid token from identity's key set and refuses a missing (missing_token), malformed or wrong-audience one")
    func requireAccessToken() async throws {
        let identity = try await FakeIdentity()
        try await identity.serve { identityURL in
            let verifier = AccessTokenVerifier(identity: identityURL, clock: .system, logger: TestEnvironment.logger)
            let app = makeApplication { router in
                router.group("/me").add(middleware: RequireAccessToken(verifier: verifier)).get { _, context in
                    try context.requireAuth().sub
                }
            }
            try await app.test(.router) { client in
                let user = UUID()
                let token = try await identity.token(user: user)
                let admitted = try await client.execute(uri: "/me", method: .get, headers: [.authorization: "Bearer \(token)"])
                #expect(admitted.status == .ok)
                #expect(text(admitted) == user.lowercased)

                let missing = try await client.execute(uri: "/me", method: .get)
                #expect(missing.status == .unauthorized)
                #expect(missing.headers[.contentType] == "application/problem+json")
                #expect(try problem(missing).code == "missing_token")

                let basic = try await client.execute(uri: "/me", method: .get, headers: [.authorization: "Basic \(token)"])
                #expect(basic.status == .unauthorized)
                #expect(try problem(basic).code == "invalid_token")

                let service = try await identity.issuer.issueServiceToken(service: "media")
                let wrongAudience = try await client.execute(uri: "/me", method: .get, headers: [.authorization: "Bearer \(service)"])
                #expect(wrongAudience.status == .unauthorized)
                #expect(try problem(wrongAudience).code == "invalid_token")

                let other = try await FakeIdentity().token(user: user)
                let foreign = try await client.execute(uri: "/me", method: .get, headers: [.authorization: "Bearer \(other)"])
                #expect(foreign.status == .unauthorized)
                #expect(try problem(foreign).code == "unknown_key")
            }
        }
    }
}
