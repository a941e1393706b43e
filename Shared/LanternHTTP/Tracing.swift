import Foundation
import Instrumentation
import Logging
import NIOHTTP1
import OTel
import ServiceLifecycle
import Tracing

/// Distributed tracing of every executable: swift-otel's tracer, always on, so every request and every event has
/// a trace id that W3C `traceparent` carries through the gateway, the services and the event bus (`EventTrace`),
/// and that every log line names (`trace_id`, `span_id`). Exporting spans is off unless configured with the
/// OpenTelemetry variables — `OTEL_TRACES_EXPORTER=otlp` and `OTEL_EXPORTER_OTLP_ENDPOINT` (OTLP/HTTP) — so a
/// deployment without a collector pays for ids, not for a failing exporter.
public enum LanternTracing {
    /// Bootstraps the tracer (once per process) and returns the service that runs its processor and exporter.
    public static func bootstrap(serviceName: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> any Service {
        var configuration = OTel.Configuration.default
        configuration.serviceName = serviceName
        configuration.logs.enabled = false
        configuration.metrics.enabled = false  // Prometheus on the operations port
        configuration.traces.exporter = .none
        configuration.diagnosticLogLevel = .warning
        return try OTel.bootstrap(configuration: configuration, environment: environment)
    }

    /// What every log line adds from the current trace.
    public static let loggingMetadata = OTel.makeLoggingMetadataProvider()
}

/// `traceparent` into the headers of a request the gateway forwards (its own HTTP client has no tracing of its own).
public struct HTTPHeadersInjector: Injector {
    public init() {}
    public func inject(_ value: String, forKey key: String, into carrier: inout HTTPHeaders) { carrier.replaceOrAdd(name: key, value: value) }
}
