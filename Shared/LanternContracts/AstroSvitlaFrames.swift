import Foundation
import LanternCore

/// AstroSvitla's real-time frames: a report the app is waiting for has finished (`report_ready`) or finally failed
/// (`report_failed`); the app then fetches it (`GET /v1/reports/{reportId}`). Both carry the same fields.
public enum AstroSvitlaFrames {
    /// Which end a report came to: the frame's name and its `status`.
    public protocol Outcome: Sendable {
        static var type: String { get }
        static var status: String { get }
    }
    public enum Ready: Outcome {
        public static let type = "report_ready"
        public static let status = "ready"
    }
    public enum Failed: Outcome {
        public static let type = "report_failed"
        public static let status = "failed"
    }

    public struct Report<End: Outcome>: RealtimeFrameBody {
        public static var app: AppID { .astrosvitla }
        public static var type: String { End.type }
        public var reportId: String
        public var chart: String
        public var area: String
        public var status = End.status

        public init(reportId: String, chart: String, area: String) {
            self.reportId = reportId
            self.chart = chart
            self.area = area
        }
    }

    public typealias ReportReady = Report<Ready>
    public typealias ReportFailed = Report<Failed>
}
