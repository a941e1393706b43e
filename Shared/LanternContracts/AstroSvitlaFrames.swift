import Foundation
import LanternCore

/// AstroSvitla's real-time frames: a report the app is waiting for has finished (`report_ready`) or finally failed
/// (`report_failed`); the app then fetches it (`GET /v1/reports/{reportId}`).
public enum AstroSvitlaFrames {
    public static let reportReady = "report_ready"
    public static let reportFailed = "report_failed"

    public static func report(_ type: String, to user: String, reportId: String, chart: String, area: String) -> RealtimeFrame {
        RealtimeFrame(to: [user], app: .astrosvitla, type: type, data: .object([
            "reportId": .string(reportId), "chart": .string(chart), "area": .string(area),
            "status": .string(type == reportReady ? "ready" : "failed"),
        ]))
    }
}
