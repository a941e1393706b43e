import AsyncHTTPClient
import Foundation
import Hummingbird
import LanternCore
import LanternService
import LanternTestSupport
import NIOCore
import NIOHTTP1
import Testing

/// `method path` at `port` saying `Host: host`: the status, once the listener accepts (up to 30 s).
private func call(_ port: Int, _ method: HTTPMethod = .GET, _ path: String, host: String) async throws -> Int {
    let deadline = ContinuousClock.now + .seconds(30)
    while true {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = method
        request.headers.replaceOrAdd(name: "Host", value: host)
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
            _ = try await response.body.collect(upTo: 1 << 20)
            return Int(response.status.code)
        } catch {
            if ContinuousClock.now > deadline { throw error }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

@Suite("LanternService: every listener answers only its own names (#44 item 4)")
struct HostCheckTests {
    @Test("in development a service's API port and its operations port answer a rebinding page's Host with 421 before any route; their own names pass",
          arguments: [["LANTERN_ENVIRONMENT": "development"], ["ALLOWED_HOSTS": "api.lantern.example"]])
    func everyListener(_ variables: [String: String]) async throws {
        let api = try freePort(), operations = try OperationsPort()
        let settings = Settings.fixed(variables.merging(["HTTP_PORT": String(api), "OPS_PORT": String(operations.port)]) { $1 })
        let process = try ProcessSettings(serviceName: "hosts-test", settings: settings, defaultPort: api)
        var builder = ServiceBuilder("hosts-test", process: process, logger: TestEnvironment.logger)
        builder.addOperationsRoutes { router in router.post("/development/clock") { _, _ in Response(status: .ok) } }
        let router = builder.makeRouter()
        router.post("/v1/auth/device") { _, _ in Response(status: .created) }
        try await withService(builder.application(router: router)) { () async throws -> Void in
            for (port, method, path) in [(api, HTTPMethod.POST, "/v1/auth/device"), (api, .GET, "/health/live"), (api, .GET, "/nowhere"),
                                         (operations.port, .POST, "/development/clock"), (operations.port, .GET, "/metrics"),
                                         (operations.port, .GET, "/health/ready")] {
                for host in ["rebind.evil.example", "rebind.evil.example:\(port)", "localhost.evil.example"] {
                    #expect(try await call(port, method, path, host: host) == 421, "\(port) \(method) \(path) Host: \(host)")
                }
                let own = try await call(port, method, path, host: "127.0.0.1:\(port)")
                #expect(own != 421, "\(port) \(method) \(path) refused its own name")
            }
            if variables["ALLOWED_HOSTS"] != nil {
                #expect(try await call(api, .POST, "/v1/auth/device", host: "api.lantern.example") == 201)
            }
        }
    }

    @Test("outside development with no ALLOWED_HOSTS any Host is taken (a deployment's load balancer decides; services are called by cluster names)")
    func deployment() async throws {
        let settings = Settings.fixed(["HTTP_PORT": "0"])
        let process = try ProcessSettings(serviceName: "hosts-test", settings: settings, defaultPort: 0)
        #expect(process.apiHosts == nil && process.operationsHosts == nil)
    }
}
