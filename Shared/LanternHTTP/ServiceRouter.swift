import Foundation
import Hummingbird
import LanternCore
import Prometheus

/// The two routers every Lantern process serves.
///
/// The API router (`make`) is what clients and other services call: request ids, problem+json errors, metrics,
/// outage answers, and a bare `/health/live`. The operations router (`operations`) listens on its own port
/// (`OPS_PORT`) and holds what only the deployment should reach: `/health/ready`, which names every dependency,
/// and `/metrics`. A load balancer in front of the API port can then never expose either.
public enum ServiceRouter {
    /// - Parameters:
    ///   - hosts: the names the listener answers to (`ProcessSettings.apiHosts`); nil: any.
    ///   - watches: dependencies whose outage is answered with 503 at once (`OutageMiddleware`).
    ///   - classify: errors of dependencies that become a problem other than 500 (`ProblemMiddleware`).
    public static func make(hosts: AllowedHosts? = nil, watches: [any DependencyWatch] = [],
                            classify: @escaping @Sendable (any Error) -> Problem? = { _ in nil },
                            describe: @escaping @Sendable (any Error) -> String = { "\($0)" }) -> Router<LanternRequestContext> {
        Observability.bootstrapMetrics()
        let router = Router(context: LanternRequestContext.self)
        router.add(middleware: RequestIDMiddleware())
        // A server span per request, continuing the caller's W3C `traceparent` (LanternTracing); around the
        // metrics so the access line carries the trace id.
        router.add(middleware: RequestTracing())
        // Outside the problem middleware, so every request is counted with the status it was answered with.
        router.add(middleware: RequestMetrics())
        // Inside the request-id middleware, so problem responses carry X-Request-Id too.
        router.add(middleware: ProblemMiddleware(classify: classify, describe: describe))
        // Before every route: a request to another name (DNS rebinding) is answered 421 and goes no further.
        if let hosts { router.add(middleware: AllowedHostsMiddleware(hosts)) }
        router.add(middleware: OutageMiddleware(watches: watches))
        router.get("/health/live", use: live)
        return router
    }

    /// `/health/live`, `/health/ready` and `/metrics`, for the operations port, answering only `hosts`
    /// (`ProcessSettings.operationsHosts`; nil: any). Scrapes and probes are not counted in the request metrics: they
    /// would drown the API's own figures.
    public static func operations(readiness: ReadinessChecks, hosts: AllowedHosts? = nil) -> Router<LanternRequestContext> {
        Observability.bootstrapMetrics()
        let router = Router(context: LanternRequestContext.self)
        router.add(middleware: ProblemMiddleware())
        if let hosts { router.add(middleware: AllowedHostsMiddleware(hosts)) }
        router.get("/health/live", use: live)
        router.get("/health/ready") { _, _ in
            let report = await readiness.run()
            return JSONResponse(report, status: report.status == "ok" ? .ok : .serviceUnavailable)
        }
        router.get("/metrics") { _, _ in
            var buffer: [UInt8] = []
            buffer.reserveCapacity(16 * 1024)
            Observability.registry.emit(into: &buffer)
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(bytes: buffer)))
        }
        return router
    }

    @Sendable static func live(_ request: Request, _ context: LanternRequestContext) -> JSONResponse<[String: String]> {
        JSONResponse(["status": "ok"])
    }
}
