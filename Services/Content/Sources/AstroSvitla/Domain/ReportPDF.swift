import Foundation
import LanternRendering

/// A report as an A4 PDF (FR-047): title, the chart picture, the three sections, the date it was written; in the
/// report's language, with the fonts embedded so Cyrillic reads anywhere.
enum ReportPDF {
    static func render(title: String, sections: ReportSections, chartSVG: String, language: ReportLanguage, notes: [String],
                       writtenAt: Date) async throws -> Data {
        let date = dateText(writtenAt, language)
        let headings = ReportText.headings(language)
        return try await Renderer.run {
            var style = PDFDocument.Style()
            style.footer = "AstroSvitla · \(date)"
            let document = try PDFDocument(title: title, style: style)
            document.title(title)
            document.small(language == .uk ? "Звіт за натальною картою · \(date)" : "Natal chart report · \(date)")
            try document.svg(chartSVG, size: 260)
            for note in notes { document.small(note) }
            document.heading(headings.key)
            document.body(sections.keyInfluences)
            document.heading(headings.analysis)
            document.body(sections.detailedAnalysis)
            document.heading(headings.recommendations)
            document.bullets(sections.recommendations)
            return try document.finish()
        }
    }

    static func dateText(_ date: Date, _ language: ReportLanguage) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: language == .uk ? "uk_UA" : "en_GB")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateStyle = .long
        return formatter.string(from: date)
    }
}
