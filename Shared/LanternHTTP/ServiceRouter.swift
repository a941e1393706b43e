import Foundation
import Hummingbird
import LanternCore
import Prometheus

/// The router every Lantern HTTP process starts from: request ids, problem+json errors, metrics, and the
/// `/health/live`, `/health/ready` and `/metrics` routes of the architecture contract.
public enum ServiceRouter {
    /// - Parameters:
    ///   - watches: dependencies whose outage is answered with 503 at once (`OutageMiddleware`).
    ///   - classify: errors of dependencies that become a problem other than 500 (`ProblemMiddleware`).
    public static func make(readiness: ReadinessChecks, watches: [any DependencyWatch] = [],
                            classify: @escaping @Sendable (any Error) -> Problem? = { _ in nil }) -> Router<LanternRequestContext> {
        Observability.bootstrapMetrics()
        let router = Router(context: LanternRequestContext.self)
        router.add(middleware: RequestIDMiddleware())
        // Inside the request-id middleware, so problem responses carry X-Request-Id too.
        router.add(middleware: ProblemMiddleware(classify: classify))
        router.add(middleware: MetricsMiddleware())
        router.add(middleware: OutageMiddleware(watches: watches))
        router.get("/health/live") { _, _ in JSONResponse(["status": "ok"]) }
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
}
