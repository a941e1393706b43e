import Foundation
import LanternCore

/// AstroSvitla's real-time frames: a report the app is waiting for has finished (`report_ready`) or finally failed
/// (`report_failed`); the app then fetches it (`GET /v1/reports/{reportId}`).
public enum AstroSvitlaFrames {
    public struct ReportReady: RealtimeFrameBody {
        public static let app = AppID.astrosvitla
        public static let type = "report_ready"
        public var reportId: String
        public var chart: String
        public var area: String
        public var status = "ready"

        public init(reportId: String, chart: String, area: String) {
            self.reportId = reportId
            self.chart = chart
            self.area = area
        }
    }

    public struct ReportFailed: RealtimeFrameBody {
        public static let app = AppID.astrosvitla
        public static let type = "report_failed"
        public var reportId: String
        public var chart: String
        public var area: String
        public var status = "failed"

        public init(reportId: String, chart: String, area: String) {
            self.reportId = reportId
            self.chart = chart
            self.area = area
        }
    }
}
