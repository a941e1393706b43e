@testable import GatewayService
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

@Suite("Upstream client")
struct UpstreamClientTests {
    let loop = MultiThreadedEventLoopGroup.singleton.next()

    func withUpstream(_ configuration: UpstreamClient.Configuration = .init(),
                      _ body: (UpstreamClient, ScriptedUpstream) async throws -> Void) async throws {
        let upstream = try await ScriptedUpstream()
        let client = UpstreamClient(group: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        do {
            try await body(client, upstream)
        } catch {
            await upstream.close()
            throw error
        }
        await upstream.close()
    }

    func send(_ client: UpstreamClient, _ upstream: ScriptedUpstream, _ path: String, method: HTTPMethod = .GET, body: String? = nil,
              timeout: TimeAmount = .seconds(30)) async throws -> (HTTPResponseHead, String) {
        var headers: HTTPHeaders = ["Host": "upstream"]
        if let body { headers.add(name: "Content-Length", value: String(body.utf8.count)) }
        let response = try await client.execute(
            UpstreamRequest(head: HTTPRequestHead(version: .http1_1, method: method, uri: path, headers: headers), body: body.map { ByteBuffer(string: $0) }),
            host: "127.0.0.1", port: upstream.port, on: loop, deadline: .now() + timeout).get()
        switch response.body {
        case .buffered(let buffer):
            return (response.head, String(buffer: buffer))
        case .stream(let stream):
            let whole = try await loop.flatSubmit { stream.collect(limit: 1 << 24) }.get()
            return (response.head, String(buffer: whole))
        }
    }

    @Test("requests reuse one keep-alive connection; method, path, body and Host reach the service")
    func keepAlive() async throws {
        try await withUpstream { (client: UpstreamClient, upstream: ScriptedUpstream) async throws in
            for index in 0..<20 {
                let (head, text) = try await send(client, upstream, "/echo?n=\(index)", method: .POST, body: "hello")
                #expect(head.status == .ok)
                #expect(text == "POST /echo?n=\(index) 5 upstream")
            }
            #expect(try await send(client, upstream, "/connections").1 == "1")
        }
    }

    @Test("an answer of unknown length streams whole (1 MiB in order)")
    func streaming() async throws {
        try await withUpstream { (client: UpstreamClient, upstream: ScriptedUpstream) async throws in
            let (head, text) = try await send(client, upstream, "/big")
            #expect(head.status == .ok)
            #expect(text.utf8.count == 1 << 20)
            #expect(Array(text.utf8).enumerated().allSatisfy { $0.element == UInt8(65 + $0.offset / (64 * 1024)) })
            // The connection is whole after a streamed answer and carries the next request.
            #expect(try await send(client, upstream, "/after").1 == "GET /after 0 upstream")
        }
    }

    @Test("a service that closes after answering, or drops the connection, costs no request that could be sent again")
    func closedConnections() async throws {
        try await withUpstream { (client: UpstreamClient, upstream: ScriptedUpstream) async throws in
            #expect(try await send(client, upstream, "/close").1 == "bye")
            #expect(try await send(client, upstream, "/next").1 == "GET /next 0 upstream")
            await #expect(throws: UpstreamError.self) { _ = try await send(client, upstream, "/drop") }
            #expect(try await send(client, upstream, "/again").1 == "GET /again 0 upstream")
        }
    }

    @Test("an answer that stops half-way is cut at the deadline; nothing listening is connectFailed")
    func failures() async throws {
        try await withUpstream { (client: UpstreamClient, upstream: ScriptedUpstream) async throws in
            await #expect(throws: UpstreamError.timedOut) { _ = try await send(client, upstream, "/hang", timeout: .milliseconds(300)) }
            #expect(try await send(client, upstream, "/fine").1 == "GET /fine 0 upstream")
        }
        let client = UpstreamClient(group: MultiThreadedEventLoopGroup.singleton)
        let nobody = try await ScriptedUpstream()
        let port = nobody.port
        await nobody.close()
        await #expect {
            _ = try await client.execute(UpstreamRequest(head: HTTPRequestHead(version: .http1_1, method: .GET, uri: "/"), body: nil),
                                         host: "127.0.0.1", port: port, on: loop, deadline: .now() + .seconds(30)).get()
        } throws: { error in
            if case UpstreamError.connectFailed = error { return true }
            return false
        }
    }

    @Test("more concurrent requests than connections wait for one to come free")
    func waiting() async throws {
        var configuration = UpstreamClient.Configuration()
        configuration.maxConnectionsPerLoop = 2
        try await withUpstream(configuration) { (client: UpstreamClient, upstream: ScriptedUpstream) async throws in
            let texts = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<12 { group.addTask { try await send(client, upstream, "/n\(index)").1 } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(texts) == Set((0..<12).map { "GET /n\($0) 0 upstream" }))
            #expect(try await send(client, upstream, "/connections").1 == "2")
        }
    }

    @Test("HEAD gets the head alone, even with a Content-Length")
    func head() async throws {
        try await withUpstream { (client: UpstreamClient, upstream: ScriptedUpstream) async throws in
            let (head, text) = try await send(client, upstream, "/x", method: .HEAD)
            #expect(head.status == .ok)
            #expect(text.isEmpty)
            #expect(try await send(client, upstream, "/y").1 == "GET /y 0 upstream")
        }
    }
}
