import Hummingbird
import Metrics
import Prometheus
import Synchronization

/// The process-wide Prometheus registry behind `/metrics`.
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
        if first { MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry)) }
    }
}
