import AsyncHTTPClient
import Foundation
import LanternHTTP

/// `GET /health`: the gateway's own readiness plus every deployed service's `/health/ready`.
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
                        let request = HTTPClientRequest(url: url.appendingPathComponent("health/ready").absoluteString)
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
