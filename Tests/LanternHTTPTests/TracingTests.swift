import Foundation
@testable import LanternHTTP
import NIOHTTP1
import OTel
import Testing
import Tracing

/// The tracer as each executable configures it, made with swift-otel's own backend (not bootstrapped: one process
/// may bootstrap once) and driven as the request middleware drives it.
@Suite("Tracing: ids always, recording only with an exporter")
struct TracingTests {
    /// The `traceparent` a root span of `environment`'s tracer carries on, and whether it was recorded.
    func rootSpan(_ environment: [String: String]) throws -> (traceparent: String, recording: Bool) {
        let backend = try OTel.makeTracingBackend(configuration: LanternTracing.configuration(serviceName: "test", environment: environment))
        let span = backend.factory.startSpan("GET /v1/me", context: .topLevel, ofKind: .server)
        defer { span.end() }
        var headers = HTTPHeaders()
        backend.factory.inject(span.context, into: &headers, using: HTTPHeadersInjector())
        return (headers.first(name: "traceparent") ?? "", span.isRecording)
    }

    @Test("without an exporter a root span is not recorded, yet has a trace id and a span id that traceparent carries, marked unsampled")
    func withoutExporter() throws {
        for environment in [[:], ["OTEL_TRACES_EXPORTER": "none"], ["OTEL_TRACES_EXPORTER": " None "]] {
            let (traceparent, recording) = try rootSpan(environment)
            #expect(!recording, "\(environment)")
            let parts = traceparent.split(separator: "-").map(String.init)
            #expect(parts.count == 4 && parts[0] == "00" && parts[3] == "00", "\(traceparent)")
            #expect(parts.count == 4 && parts[1].count == 32 && parts[1] != String(repeating: "0", count: 32) && parts[2].count == 16, "\(traceparent)")
        }
    }

    @Test("with an exporter a root span is recorded and sampled, as before")
    func withExporter() throws {
        for environment in [["OTEL_TRACES_EXPORTER": "otlp"], ["OTEL_TRACES_EXPORTER": "console,otlp"]] {
            let (traceparent, recording) = try rootSpan(environment)
            #expect(recording, "\(environment)")
            #expect(traceparent.hasSuffix("-01"), "\(traceparent)")
        }
        #expect(!LanternTracing.exportsTraces(["OTEL_TRACES_EXPORTER": ""]))
    }
}
