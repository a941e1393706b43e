import Foundation
import Instrumentation
import LanternCore
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
        try OTel.bootstrap(configuration: configuration(serviceName: serviceName, environment: environment), environment: environment)
    }

    /// The tracer's configuration before the OpenTelemetry variables of `environment` are applied over it.
    public static func configuration(serviceName: String, environment: [String: String]) -> OTel.Configuration {
        var configuration = OTel.Configuration.default
        configuration.serviceName = serviceName
        configuration.logs.enabled = false
        configuration.metrics.enabled = false  // Prometheus on the operations port
        configuration.traces.exporter = .none
        // With nothing to export to, spans are not recorded: a root span is dropped by `parentbased_always_off`,
        // which still gives it its trace and span ids (logs and `traceparent` carry them, marked unsampled, so the
        // processes downstream drop theirs too). Recorded, each span took a lock and a place in the batch
        // processor's queue, which filled under load ("Spans were dropped") and emptied into nothing.
        // `OTEL_TRACES_SAMPLER` still decides when it is set.
        if !exportsTraces(environment) { configuration.traces.sampler = .parentBasedAlwaysOff }
        configuration.diagnosticLogLevel = .warning
        return configuration
    }

    /// Whether `OTEL_TRACES_EXPORTER` names an exporter (`none`, or not set, names none).
    static func exportsTraces(_ environment: [String: String]) -> Bool {
        let exporters = (environment["OTEL_TRACES_EXPORTER"] ?? "").split(separator: ",").map { $0.trimmingWhitespace().lowercased() }
        return exporters.contains { !$0.isEmpty && $0 != "none" }
    }

    /// What every log line adds from the current trace.
    public static let loggingMetadata = OTel.makeLoggingMetadataProvider()
}

/// `traceparent` into the headers of a request the gateway forwards (its own HTTP client has no tracing of its own).
public struct HTTPHeadersInjector: Injector {
    public init() {}
    public func inject(_ value: String, forKey key: String, into carrier: inout HTTPHeaders) { carrier.replaceOrAdd(name: key, value: value) }
}
