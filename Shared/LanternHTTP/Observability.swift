import CoreMetrics
import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus
import Synchronization

/// The process-wide Prometheus registry behind the operations port's `/metrics`.
///
/// swift-metrics can be bootstrapped once per process; tests build many applications in one process, so the
/// bootstrap happens on first use and every application shares the registry.
public enum Observability {
    private static let bootstrapped = Mutex(false)
    public static let registry = PrometheusCollectorRegistry()

    public static func bootstrapMetrics() {
        let first = bootstrapped.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        if first { MetricsSystem.bootstrap(LanternMetricsFactory(registry: registry)) }
    }
}

/// The `# HELP` line of every metric Lantern exposes, by name: the platform's here, each service's and app's in its
/// own `metricHelp` (registered when it is built). Prometheus's lint (`promtool check metrics`, run on every
/// executable by the tests) wants one for each; a metric without one is written with a placeholder that the tests
/// look for, so a new metric cannot ship without its description.
public enum MetricHelp {
    public static let missing = "Lantern metric without a description (add it to MetricHelp)."

    public static let texts: [String: String] = [
        // HTTP (RequestMetrics)
        "lantern_http_requests_total": "HTTP requests answered, by route template, method and status code.",
        "lantern_http_request_duration_seconds": "Time from a request's head to its answer's head, by route template and method.",
        "lantern_http_requests_in_flight": "HTTP requests being answered now.",
        // Event bus
        "lantern_events_handled_total": "Stream entries a consumer group handled, by stream, group, event type and result.",
        "lantern_erasures_recovered_total": "user.deleted events acknowledged in a group without being handled, found by the erasure audit and handled then.",
        "lantern_events_dead_lettered_total": "Stream entries moved to the dead-letter stream after their last attempt.",
        "lantern_stream_consumer_lag": "Entries of a stream not yet delivered to a consumer group (XINFO GROUPS lag).",
        "lantern_stream_consumer_pending": "Entries delivered to a consumer group and not yet acknowledged.",
        "lantern_stream_length": "Entries kept in a stream (XLEN), the dead-letter streams included.",
        "lantern_outbox_backlog": "Events committed in a service's outbox and not yet published to Redis.",
        "lantern_outbox_oldest_seconds": "Age of the oldest event waiting in a service's outbox (0 when empty).",
        // Periodic work (ServiceBuilder.addPeriodic)
        "lantern_periodic_passes_total": "Passes of periodic work, by work and outcome (ok, failed, skipped: another replica holds its lease).",
        "lantern_periodic_items_total": "Items periodic work handled (fortunes made ahead, reminders sent, retries made, rows deleted…), by work.",
        "lantern_periodic_pass_duration_seconds": "Duration of one pass of periodic work, by work.",
        "lantern_periodic_last_success_seconds": "Unix time of the last pass of periodic work that did not fail, by work.",
        // PostgreSQL
        "lantern_postgres_connections": "PostgreSQL connections of this service's instances by state (pg_stat_activity by application_name).",
        // LLM
        "lantern_llm_calls_total": "Calls to language models, by provider, model, task and outcome.",
        "lantern_llm_skipped_total": "Models passed over without a call (cooling down, over budget), by reason.",
        "lantern_llm_fallbacks_total": "Texts that went on to the next model of their route.",
        "lantern_llm_texts_total": "Texts delivered, by task and source (a model, the cache or the local generator).",
        "lantern_llm_call_duration_seconds": "Duration of calls to language models.",
        "lantern_llm_tokens_total": "Tokens the providers reported, by kind (prompt, output, thoughts).",
    ]

    /// The descriptions a service gives of its own metrics (its `metricHelp`), registered before it creates them.
    private static let registered = Mutex<[String: String]>([:])

    /// Adds a service's or an app's descriptions of its own metrics (a literal named `metricHelp`, which
    /// scripts/observability-check.sh reads too); call it when the service is built, before its metrics are used.
    public static func register(_ texts: [String: String]) {
        registered.withLock { $0.merge(texts) { _, new in new } }
    }

    public static func text(for name: String) -> String { texts[name] ?? registered.withLock { $0[name] } ?? missing }
}

/// swift-metrics over the Prometheus registry, as swift-prometheus's own factory, but with each metric's help
/// text from `MetricHelp` (that factory writes none, which `promtool check metrics` reports).
struct LanternMetricsFactory: CoreMetrics.MetricsFactory {
    let registry: PrometheusCollectorRegistry
    let base: PrometheusMetricsFactory

    /// Latencies from a millisecond to a minute: the same buckets for HTTP, LLM calls and everything timed.
    static let durationBuckets: [Duration] = [.milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
                                              .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
                                              .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30), .seconds(60)]

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        self.base = PrometheusMetricsFactory(registry: registry)
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(name: label, labels: dimensions, help: MetricHelp.text(for: label))
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(name: label, labels: dimensions, help: MetricHelp.text(for: label))
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(name: label, labels: dimensions, help: MetricHelp.text(for: label)) }
        return registry.makeValueHistogram(name: label, labels: dimensions, buckets: base.defaultValueHistogramBuckets,
                                           help: MetricHelp.text(for: label))
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(name: label, labels: dimensions, help: MetricHelp.text(for: label))
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        registry.makeDurationHistogram(descriptor: MetricNameDescriptor(metricName: label, unitName: "", helpText: MetricHelp.text(for: label)),
                                       labels: dimensions, buckets: Self.durationBuckets)
    }

    func destroyCounter(_ handler: any CounterHandler) { base.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { base.destroyFloatingPointCounter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }
    func destroyMeter(_ handler: any MeterHandler) { base.destroyMeter(handler) }
    func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }
}

/// Counts and times every request by its route template (`/v1/moments/{id}`, never the raw path, which would make a
/// series per id): the router's matched path, or the template a middleware found for a request it answered itself
/// (the gateway's proxy sets `coreContext.endpointPath` to the OpenAPI path it matched), and writes the access line.
public struct RequestMetrics<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        RequestRecord.started()
        do {
            let response = try await next(request, context)
            RequestRecord.answered(route: context.endpointPath, method: request.method.rawValue, status: response.status.code,
                                   since: started, logger: context.logger)
            return response
        } catch {
            // Outside ProblemMiddleware, which answers every error: what still arrives here is the server's fault.
            RequestRecord.answered(route: context.endpointPath, method: request.method.rawValue, status: 500, since: started,
                                   logger: context.logger)
            throw error
        }
    }
}

/// What `RequestMetrics` records of each request, for any HTTP stack that answers requests of its own (the
/// gateway's proxy handler): the in-flight gauge, the counter and timer by route template, the access line.
public enum RequestRecord {
    public static func started() { HTTPMetricHandles.inFlight.increment() }

    /// - Parameter route: the route template; nil: `unmatched`.
    public static func answered(route: String?, method: String, status: Int, since started: ContinuousClock.Instant, logger: Logger) {
        HTTPMetricHandles.inFlight.decrement()
        let route = route ?? "unmatched"
        let handles = HTTPMetricHandles.shared.handles(route: route, method: method, status: status)
        handles.requests.increment()
        let elapsed = ContinuousClock.now - started
        let nanoseconds = elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
        handles.duration.recordNanoseconds(nanoseconds)
        // The access line: one per request at info (liveness probes aside), in the request's trace.
        guard route != "/health/live" else { return }
        logger.info("request", metadata: ["route": .string(route), "method": .string(method), "status": .stringConvertible(status),
                                                  "ms": .string(String(format: "%.1f", Double(nanoseconds) / 1e6))])
    }
}

/// The counter and timer of each route, method and status, made once: making a metric asks the registry (a lock,
/// the name checked, the labels hashed), which every request did twice. Routes are templates, so the set is bounded
/// by the routes, methods and statuses a service answers.
final class HTTPMetricHandles: Sendable {
    struct Key: Hashable {
        let route: String
        let method: String
        let status: Int
    }

    struct Handles: Sendable {
        let requests: Metrics.Counter
        let duration: Metrics.Timer
    }

    static let shared = HTTPMetricHandles()
    static let inFlight = Meter(label: "lantern_http_requests_in_flight")

    private let handles = Mutex<[Key: Handles]>([:])

    func handles(route: String, method: String, status: Int) -> Handles {
        let key = Key(route: route, method: method, status: status)
        if let known = handles.withLock({ $0[key] }) { return known }
        let made = Handles(requests: Metrics.Counter(label: "lantern_http_requests_total", dimensions: [("route", route), ("method", method), ("status", String(status))]),
                           duration: Metrics.Timer(label: "lantern_http_request_duration_seconds", dimensions: [("route", route), ("method", method)]))
        handles.withLock { $0[key] = made }
        return made
    }
}
