import Instrumentation
import LanternContracts
import Tracing

/// W3C trace context across the event bus: an envelope carries the `traceparent` of the work that wrote it (the
/// outbox fills it in), and whoever handles it continues that trace, so one upload can be followed from the
/// app's request through media's outbox to the partner's socket frame and push.
///
/// Propagation is the bootstrapped instrument's (swift-otel's W3C propagator in the executables); without one
/// (tests that bootstrap nothing) both ends are no-ops and envelopes go out with a null `traceparent`, as before.
public enum EventTrace {
    /// The current trace as a `traceparent` header value, or nil outside a trace.
    public static func currentTraceparent() -> String? {
        guard let context = InstrumentationContext.current else { return nil }
        var carrier: [String: String] = [:]
        InstrumentationSystem.instrument.inject(context, into: &carrier, using: DictionaryInjector())
        return carrier["traceparent"]
    }

    /// The service context an envelope's `traceparent` names (a top-level context when it names none).
    public static func context(of envelope: EventEnvelope) -> InstrumentationContext {
        var context = InstrumentationContext.topLevel
        if let traceparent = envelope.traceparent {
            InstrumentationSystem.instrument.extract(["traceparent": traceparent], into: &context, using: DictionaryExtractor())
        }
        return context
    }

    /// Runs `body` in a consumer span that continues the envelope's trace; logs inside it carry its trace id.
    public static func handling<T>(_ envelope: EventEnvelope, group: String, _ body: () async throws -> T) async throws -> T {
        try await withSpan("process \(envelope.type)", context: context(of: envelope), ofKind: .consumer) { span in
            span.attributes["messaging.system"] = "redis"
            span.attributes["messaging.consumer.group.name"] = group
            span.attributes["messaging.message.id"] = envelope.id.uuidString.lowercased()
            return try await body()
        }
    }
}

struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
}

struct DictionaryExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
}
