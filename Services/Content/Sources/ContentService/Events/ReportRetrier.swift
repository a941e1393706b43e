import Foundation
import LanternCore
import Logging
import ServiceLifecycle

/// Writes the AstroSvitla reports a request could not finish (the process died, storage failed), with growing
/// delays, until they are ready or, after `Reports.maxAttempts`, marked failed with a support code. Reports are
/// leased, so replicas share the work.
struct ReportRetrier: Service {
    let reports: Reports
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do { try await reports.retryDue() } catch is CancellationError {
                    return
                } catch {
                    logger.warning("retrying reports failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
