import Foundation
import HTTPTypes
import Hummingbird
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

/// `traceparent` from the head of a request the gateway's proxy handler answers (NIO's fields, not HTTPTypes').
public struct HTTPHeadersExtractor: Extractor {
    public init() {}
    public func extract(key name: String, from carrier: HTTPHeaders) -> String? { carrier.first(name: name) }
}

/// A server span per request, continuing the caller's W3C `traceparent`: what Hummingbird's `TracingMiddleware`
/// does, with its attributes written only when the span records. Unrecorded (no exporter configured, or a caller
/// that did not sample) a span still gives the request its trace and span ids, which the logs and the calls it makes
/// carry on; attributes nobody will read cost a fifth of the middleware chain on every request.
public struct RequestTracing<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var trace = InstrumentationContext.current ?? InstrumentationContext.topLevel
        InstrumentationSystem.instrument.extract(request.headers, into: &trace, using: HTTPFieldsExtractor())
        let span = startSpan("HTTP \(request.method.rawValue)", context: trace, ofKind: .server)
        if span.isRecording {
            span.updateAttributes { attributes in
                attributes["http.request.method"] = request.method.rawValue
                attributes["url.path"] = request.uri.path
                attributes["url.query"] = request.uri.query
                attributes["user_agent.original"] = request.headers[.userAgent]
                attributes["http.request.body.size"] = request.headers[.contentLength].flatMap { Int($0) }
                if let address = (context as? any RemoteAddressRequestContext)?.remoteAddress {
                    attributes["net.sock.peer.addr"] = address.ipAddress
                    attributes["net.sock.peer.port"] = address.port
                }
            }
        }
        do {
            var response = try await InstrumentationContext.$current.withValue(span.context) { try await next(request, context) }
            if let route = context.endpointPath { span.operationName = route }
            guard span.isRecording else {
                span.end()
                return response
            }
            span.updateAttributes { attributes in
                attributes["http.route"] = context.endpointPath
                attributes["http.response.status_code"] = Int(response.status.code)
                attributes["http.response.body.size"] = response.body.contentLength
            }
            // The span ends once the body is written (a streamed answer takes its time).
            let (ending, body) = (SpanEnding(span), response.body)
            response.body = ResponseBody(contentLength: body.contentLength) { writer in
                defer { ending.end() }
                try await body.write(writer)
            }
            return response
        } catch {
            if let route = context.endpointPath { span.operationName = route }
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            if span.isRecording {
                span.updateAttributes { attributes in
                    attributes["http.route"] = context.endpointPath
                    attributes["http.response.status_code"] = status
                }
                if status >= 500 { span.setStatus(.init(code: .error)) }
                span.recordError(error)
            }
            span.end()
            throw error
        }
    }
}

/// `traceparent` (and any other field the instrument reads) from a request's fields.
struct HTTPFieldsExtractor: Extractor {
    func extract(key name: String, from fields: HTTPFields) -> String? {
        HTTPField.Name(name).flatMap { fields[$0] }
    }
}

/// Ends a span once, from the closure that runs after the body is written.
private final class SpanEnding: @unchecked Sendable {
    // Written once, by the body writer's closure, after the handler has returned the response: no concurrent access.
    private var span: (any Span)?
    init(_ span: any Span) { self.span = span }
    func end() {
        span?.end()
        span = nil
    }
    deinit { span?.end() }
}
