import Foundation
@testable import GatewayRouting
@testable import GatewayService
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LanternContracts
import LanternCore
import LanternEvents
import LanternTestSupport
import LanternTokens
import NIOCore
import NIOFoundationCompat
import Synchronization
import Testing

/// Counts what reached a fake.
final class HitCounter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// A stand-in for identity and the other services: publishes a real EdDSA key set, echoes what it receives.
struct FakeUpstream {
    let identity: FakeIdentity
    var issuer: AccessTokenIssuer { identity.issuer }
    let hits = HitCounter()

    init() async throws {
        identity = try await FakeIdentity()
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        let issuer = self.issuer
        let hits = self.hits
        router.get("/.well-known/jwks.json") { _, _ in
            let data = try JSONEncoder().encode(issuer.jwks)
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        router.get("/health/live") { _, _ in "ok" }
        // An answer of unknown length, too long to hold: `size` bytes of `0123456789…`, in 64 KiB chunks.
        router.get("/v1/moments/stream/:size") { _, context -> Response in
            let size = try context.parameters.require("size", as: Int.self)
            return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: ResponseBody { writer in
                var sent = 0
                while sent < size {
                    let count = min(65_536, size - sent)
                    try await writer.write(ByteBuffer(bytes: (sent..<(sent + count)).map { UInt8(ascii: "0") + UInt8($0 % 10) }))
                    sent += count
                }
                try await writer.finish(nil)
            })
        }
        router.on("/v1/**", method: .get) { request, _ in try Self.echo(request, hits: hits) }
        router.on("/v1/pairing", method: .get) { request, _ in try Self.echo(request, hits: hits) }
        router.on("/v1/**", method: .post) { request, _ in try Self.echo(request, hits: hits) }
        return router
    }

    static func echo(_ request: Request, hits: HitCounter) throws -> Response {
        hits.increment()
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        let data = try JSONSerialization.data(withJSONObject: ["path": request.uri.description, "headers": headers])
        return Response(status: .created, headers: [.contentType: "application/json", .init("X-Upstream")!: "yes"],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    func token(now: Date = Date()) async throws -> String {
        try await issuer.issue(userID: UUID(), sessionID: UUID(), app: .pairly).token
    }
}

struct Echo: Decodable {
    var path: String
    var headers: [String: String]
}

/// A gateway over a fake upstream that plays identity (key set) and every other service (echo). An empty value
/// in `extra` means "point this variable at the fake upstream".
func withTestGateway(_ mode: TestingSetup, _ extra: [String: String] = [:],
                     _ body: @Sendable (any TestClientProtocol, FakeUpstream, StreamNames) async throws -> Void) async throws {
    let upstream = try await FakeUpstream()
    try await LoopbackServer.run(router: upstream.router()) { port in
        let prefix = TestEnvironment.uniquePrefix()
        // A generous upstream timeout: only the timeout test is about it, and a loaded machine must not turn the
        // fake upstream's answer into a 504.
        var variables = ["REDIS_URL": try await TestEnvironment.redisURL(for: "gateway", prefix: prefix), "STREAM_PREFIX": prefix, "LOG_LEVEL": "error",
                         "IDENTITY_URL": "http://127.0.0.1:\(port)", "HTTP_PORT": "0", "UPSTREAM_TIMEOUT": "60"]
        for (name, value) in extra { variables[name] = value.isEmpty ? "http://127.0.0.1:\(port)" : value }
        let app = try await buildGatewayApplication(try GatewayConfiguration(settings: .fixed(variables)), logger: TestEnvironment.logger)
        try await app.test(mode) { client in try await body(client, upstream, StreamNames(prefix: prefix)) }
    }
}

/// Runs the gateway live (WebSockets and raw connections need a real socket) with a fake identity/media upstream, once it can admit a
/// token: a handshake is refused while the gateway's first fetch of identity's key set is on its way (5 s at most,
/// which a fresh machine starting every suite at once can take), so the body starts once a plain request with a
/// valid token gets 426 (admitted, no upgrade asked for).
func withLiveGateway(_ extra: [String: String] = [:],
                     _ body: @Sendable (_ port: Int, FakeUpstream, StreamNames) async throws -> Void) async throws {
    try await withTestGateway(.live, extra) { client, upstream, streams in
        let token = try await upstream.token()
        let admits = try await eventually(timeout: .seconds(60)) {
            try await client.execute(uri: "/v1/realtime", method: .get, headers: [.authorization: "Bearer \(token)"]).status.code == 426
        }
        try #require(admits, "the gateway never admitted a valid token")
        try await body(try #require(client.port), upstream, streams)
    }
}

/// The operations of docs/api/openapi.yaml, read as the gateway reads its copy (`OperationTable`).
enum OpenAPIDocument {
    static func paths() throws -> [(String, Set<String>)] {
        let url = ServiceList.root.appendingPathComponent("docs/api/openapi.yaml")
        return OperationTable(openAPI: try String(contentsOf: url, encoding: .utf8)).operations.map { ($0.path, Set($0.methods.map { $0.lowercased() })) }
    }
}
