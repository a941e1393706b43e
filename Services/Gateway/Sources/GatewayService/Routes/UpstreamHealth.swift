import AsyncHTTPClient
import Foundation
import LanternHTTP

/// `GET /health` on the gateway's operations port: its own readiness, and whether each deployed service answers
/// `/health/live` at the address the gateway forwards to. (Each service's readiness is on its own operations
/// port, which the gateway does not know; what the gateway can vouch for is that it reaches them.)
enum UpstreamHealth {
    struct Report: Codable, Sendable {
        var status: String
        var gateway: ReadinessChecks.Report
        var services: [String: String]
    }

    static func check(_ upstreams: [String: URL], client: HTTPClient, own: ReadinessChecks) async -> Report {
        async let gateway = own.run()
        let services = await withTaskGroup(of: (String, String).self) { group in
            for (name, url) in upstreams {
                group.addTask {
                    do {
                        let request = HTTPClientRequest(url: url.appendingPathComponent("health/live").absoluteString)
                        let response = try await client.execute(request, timeout: .seconds(2))
                        _ = try? await response.body.collect(upTo: 64 * 1024)
                        return (name, response.status.code == 200 ? "ok" : "failing: HTTP \(response.status.code)")
                    } catch {
                        return (name, "unreachable")
                    }
                }
            }
            var results: [String: String] = [:]
            for await (name, status) in group { results[name] = status }
            return results
        }
        let own = await gateway
        let ok = own.status == "ok" && services.values.allSatisfy { $0 == "ok" }
        return Report(status: ok ? "ok" : "degraded", gateway: own, services: services)
    }
}
