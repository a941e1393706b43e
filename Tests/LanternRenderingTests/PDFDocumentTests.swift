import Foundation
import LanternRendering
import LanternTestSupport
import Testing

@Suite("LanternRendering: PDFs laid out by Pango on Cairo, read back with poppler")
struct PDFDocumentTests {
    static let svg = ##"<svg xmlns="http://www.w3.org/2000/svg" width="300" height="300" viewBox="0 0 300 300"><circle cx="150" cy="150" r="140" fill="none" stroke="#333" stroke-width="3"/><text x="150" y="160" font-size="40" text-anchor="middle">♉</text></svg>"##

    @Test("English, Ukrainian and Vietnamese text comes back out of the PDF; fonts are embedded subsets; A4; long text flows onto more pages")
    func scripts() async throws {
        let english = "The Sun in Taurus steadies your affections and your purse."
        let ukrainian = "Сонце в Тельці дає вам стійкість, а Місяць у Козерозі додає рішучості."
        let vietnamese = "Hôm nay bạn sẽ gặp may mắn trong công việc."
        let long = Array(repeating: "Your chart shows steady growth in this area and your work rewards patience.", count: 120).joined(separator: " ")
        let pdf = try await Renderer.run {
            var style = PDFDocument.Style()
            style.footer = "AstroSvitla · 24 November 2026"
            let document = try PDFDocument(title: "Career and Professional Growth", style: style)
            document.title("Кар'єра та професійне зростання")
            try document.svg(Self.svg, size: 220)
            document.heading("Key influences")
            document.body(english + "\n\n" + ukrainian + "\n\n" + vietnamese)
            document.heading("Detailed analysis")
            document.body(long)
            document.bullets(["Автоматизуйте щомісячний переказ на заощадження.", "Ask for the feedback you need."])
            return (try document.finish(), document.pageCount)
        }
        let text = try await PDFTools.text(pdf.0).replacingOccurrences(of: "\n", with: " ")
        for sentence in [english, ukrainian, vietnamese, "Кар'єра та професійне зростання", "Автоматизуйте щомісячний переказ на заощадження."] {
            #expect(text.contains(sentence), "\(sentence) not in the PDF's text")
        }
        let fonts = try await PDFTools.fonts(pdf.0)
        #expect(!fonts.isEmpty && fonts.allSatisfy { $0.contains(" yes yes ") }, "\(fonts)")
        let info = try await PDFTools.info(pdf.0)
        #expect(info["Page size"]?.hasPrefix("595.276 x 841.89") == true)
        #expect(info["Title"] == "Career and Professional Growth")
        #expect(Int(info["Pages"] ?? "") == pdf.1 && pdf.1 >= 2)
        #expect(pdf.0.count < 500_000)
    }

    @Test("an SVG that does not parse is an error, not a blank picture")
    func badSVG() async throws {
        await #expect(throws: RenderingError.self) {
            try await Renderer.run {
                let document = try PDFDocument(title: "x")
                try document.svg("<svg", size: 100)
                return try document.finish()
            }
        }
    }
}
