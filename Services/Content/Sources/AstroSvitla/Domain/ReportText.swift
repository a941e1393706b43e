import Foundation

/// A report as plain text (FR-048, the share sheet) and the section names both renderings use.
enum ReportText {
    static func headings(_ language: ReportLanguage) -> (key: String, analysis: String, recommendations: String) {
        language == .uk ? ("Ключові впливи", "Детальний аналіз", "Практичні рекомендації")
                        : ("Key influences", "Detailed analysis", "Practical recommendations")
    }

    static func plain(title: String, sections: ReportSections, language: ReportLanguage) -> String {
        let h = headings(language)
        return ([title, "", h.key, sections.keyInfluences, "", h.analysis, sections.detailedAnalysis, "", h.recommendations]
                + sections.recommendations.map { "• " + $0 } + ["", "AstroSvitla"]).joined(separator: "\n")
    }
}
