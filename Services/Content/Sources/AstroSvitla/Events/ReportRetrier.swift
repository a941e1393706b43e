import Foundation
import LanternService

/// Writes the AstroSvitla reports a request could not finish (the process died, storage failed), with growing
/// delays, until they are ready or, after `Reports.maxAttempts`, marked failed with a support code. Reports are
/// leased, so replicas share the work.
enum ReportRetrier {
    static func work(_ reports: Reports, every interval: Duration) -> PeriodicWork {
        PeriodicWork("astrosvitla_report_retries", every: interval, batch: Reports.retryBatch) { try await reports.retryDue() }
    }
}
