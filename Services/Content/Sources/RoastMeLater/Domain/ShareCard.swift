import Foundation
import LanternRendering

/// A roast's share card (REQ-SHR): a PNG for a story (1080×1920, 9:16) or a post (1080×1080), with the app's logo,
/// the category's emoji and name, the roast fitted to its box, the spice as chillies, and the app's link, on a
/// background of the category's colours in the template's style. Drawn with the shared rendering module (Pango lays
/// out Vietnamese diacritics and emoji); no metadata in the file.
enum ShareCard {
    enum Format: String, Sendable, CaseIterable {
        case story, post

        var size: (width: Int, height: Int) { self == .story ? (1080, 1920) : (1080, 1080) }
    }

    /// What a card shows.
    struct Content: Sendable, Equatable {
        var text: String
        var language: RoastLanguage
        var category: RoastCatalogue.Category
        var categoryName: String
        var spice: Int
        /// The app's link, shown without its scheme.
        var link: String
    }

    /// Bumped when the drawing changes: part of the cache key and the ETag.
    static let version = 1

    /// The app's logo: a flame in a rounded square.
    static let logo = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><rect x="4" y="4" width="92" height="92" rx="22" fill="#FF6B35"/>\
        <path d="M50 14 C58 30 74 38 72 60 C70 76 60 86 50 86 C38 86 28 76 28 62 C28 48 38 42 40 30 C46 38 48 44 48 50 C54 44 54 30 50 14 Z" fill="#FFF4E6"/>\
        <path d="M50 52 C56 60 62 64 60 72 C58 80 54 82 50 82 C44 82 40 78 40 72 C40 64 48 62 50 52 Z" fill="#FFB703"/></svg>
        """

    struct Style {
        var background: (ImageCanvas.Color, ImageCanvas.Color)
        var glow: ImageCanvas.Color?
        var panel: ImageCanvas.Color
        var panelStroke: (ImageCanvas.Color, Double)?
        var text: ImageCanvas.Color
        var secondary: ImageCanvas.Color
        var textFont: String
    }

    static func style(_ template: String, colors: [String]) -> Style {
        let top = ImageCanvas.Color(hex: colors.first ?? "") ?? ImageCanvas.Color(red: 0.8, green: 0.3, blue: 0.1)
        let bottom = ImageCanvas.Color(hex: colors.last ?? "") ?? ImageCanvas.Color(red: 0.3, green: 0.1, blue: 0.05)
        switch template {
        case "paper":
            return Style(background: (ImageCanvas.Color(hex: "#FFF8EE") ?? .white, ImageCanvas.Color(hex: "#F3E6D3") ?? .white), glow: top.with(alpha: 0.12),
                         panel: .white, panelStroke: (top, 6), text: ImageCanvas.Color(hex: "#1F1A17") ?? .black, secondary: bottom, textFont: "Noto Serif Bold")
        case "neon":
            return Style(background: (ImageCanvas.Color(hex: "#0B0B1A") ?? .black, ImageCanvas.Color(hex: "#1A0B2E") ?? .black), glow: top.with(alpha: 0.45),
                         panel: ImageCanvas.Color(red: 1, green: 1, blue: 1, alpha: 0.06), panelStroke: (top, 5), text: .white,
                         secondary: ImageCanvas.Color(hex: "#F8F0FF") ?? .white, textFont: "Noto Sans Bold")
        case "gold":
            return Style(background: (ImageCanvas.Color(hex: "#14213D") ?? .black, ImageCanvas.Color(hex: "#0A1020") ?? .black),
                         glow: ImageCanvas.Color(hex: "#FCA311")?.with(alpha: 0.25), panel: ImageCanvas.Color(red: 1, green: 1, blue: 1, alpha: 0.05),
                         panelStroke: (ImageCanvas.Color(hex: "#FCA311") ?? .white, 4), text: ImageCanvas.Color(hex: "#FFF3D6") ?? .white,
                         secondary: ImageCanvas.Color(hex: "#FCA311") ?? .white, textFont: "Noto Serif Bold")
        default:  // ember
            return Style(background: (top, bottom), glow: ImageCanvas.Color.white.with(alpha: 0.08), panel: ImageCanvas.Color.black.with(alpha: 0.22),
                         panelStroke: nil, text: .white, secondary: ImageCanvas.Color.white.with(alpha: 0.85), textFont: "Noto Sans Bold")
        }
    }

    /// Draws the card; call inside `Renderer.run`.
    static func png(_ content: Content, template: String, format: Format) throws -> Data {
        let (width, height) = format.size
        let canvas = try ImageCanvas(width: width, height: height)
        let style = style(template, colors: content.category.card.colors)
        let w = Double(width), h = Double(height)
        let margin = 80.0
        canvas.fillGradient(top: style.background.0, bottom: style.background.1)
        if let glow = style.glow {
            canvas.circle(x: w * 0.85, y: h * 0.12, radius: w * 0.45, color: glow)
            canvas.circle(x: w * 0.1, y: h * 0.92, radius: w * 0.35, color: glow.with(alpha: glow.alpha * 0.7))
        }
        // Header: the logo and the app's name.
        let top = format == .story ? 120.0 : 70.0
        try canvas.svg(logo, x: margin, y: top, size: 96)
        canvas.text("RoastMeLater", font: "Noto Sans Bold 44", x: margin + 120, y: top + 18, width: w - 2 * margin - 120, color: style.text)

        // The category chip.
        let chipY = top + (format == .story ? 190 : 140)
        let chip = "\(content.category.card.emoji)  \(content.categoryName)"
        let chipFont = "Noto Sans Bold 34"
        canvas.roundedRect(x: margin, y: chipY, width: min(w - 2 * margin, canvas.lineWidth(chip, font: chipFont) + 60), height: 76, radius: 38,
                           fill: style.panel, stroke: style.panelStroke.map { ($0.0, 3) })
        canvas.text(chip, font: chipFont, x: margin + 30, y: chipY + 14, width: w - 2 * margin - 60, color: style.text)

        // The roast, as large as fits its box.
        let footerHeight = format == .story ? 300.0 : 200.0
        let boxTop = chipY + 76 + (format == .story ? 90 : 50)
        let boxHeight = h - boxTop - footerHeight
        let inner = w - 2 * margin - 2 * 60
        let sizes: [Double] = format == .story ? [64, 58, 52, 48, 44, 40, 36, 32] : [52, 48, 44, 40, 36, 32, 28, 26]
        let fitted = canvas.fittingFont(content.text, family: style.textFont, sizes: sizes, width: inner, maxHeight: boxHeight - 120, lineSpacing: 1.15)
        let panelHeight = min(boxHeight, fitted.height + 120)
        let panelY = boxTop + (boxHeight - panelHeight) / 2
        canvas.roundedRect(x: margin, y: panelY, width: w - 2 * margin, height: panelHeight, radius: 40, fill: style.panel, stroke: style.panelStroke)
        canvas.text(content.text, font: fitted.font, x: margin + 60, y: panelY + 60, width: inner, color: style.text, lineSpacing: 1.15)

        // The spice: lit chillies for the level, dim dots for the rest.
        let footerY = h - footerHeight + 20
        let spiceLabel = content.language == .vi ? "Độ cay" : "Spice"
        canvas.text("\(spiceLabel)  " + String(repeating: "🌶️", count: content.spice), font: "Noto Sans Bold 36", x: margin, y: footerY,
                    width: w - 2 * margin, color: style.secondary)
        for dot in 0..<(5 - content.spice) {
            canvas.circle(x: margin + 260 + Double(content.spice) * 56 + Double(dot) * 40, y: footerY + 28, radius: 9, color: style.secondary.with(alpha: 0.35))
        }
        let link = content.link.replacingOccurrences(of: "https://", with: "").replacingOccurrences(of: "http://", with: "")
        canvas.text(link, font: "Noto Sans 32", x: margin, y: footerY + (format == .story ? 110 : 80), width: w - 2 * margin, color: style.secondary,
                    alignment: .left)
        return try canvas.png()
    }
}
