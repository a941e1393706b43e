import Ephemeris
import Foundation

/// The static circular chart the app shows: the zodiac on the outer ring, house cusps, the planets at their
/// longitudes, aspect lines, and the Ascendant at nine o'clock (longitudes run counter-clockwise from it).
enum ChartSVG {
    enum Theme: String { case light, dark }

    struct Palette {
        var background, ink, faint, ring, accent: String
        static let light = Palette(background: "#ffffff", ink: "#1d1b2f", faint: "#b9b4cc", ring: "#f3f0fa", accent: "#c2410c")
        static let dark = Palette(background: "#14121f", ink: "#ece8f7", faint: "#5b5670", ring: "#221f33", accent: "#fb923c")
    }

    static let signGlyphs = ["♈", "♉", "♊", "♋", "♌", "♍", "♎", "♏", "♐", "♑", "♒", "♓"]
    static let elementColors = ["#e4572e", "#4c9f38", "#d4a017", "#2e86de"]  // fire, earth, air, water
    static let bodyGlyphs: [Body: String] = [.sun: "☉", .moon: "☽", .mercury: "☿", .venus: "♀", .mars: "♂", .jupiter: "♃",
                                             .saturn: "♄", .uranus: "♅", .neptune: "♆", .pluto: "♇"]
    static let aspectColors: [AspectType: String] = [.conjunction: "#8b5cf6", .opposition: "#dc2626", .square: "#dc2626",
                                                     .trine: "#2563eb", .sextile: "#16a34a"]

    static let size = 600.0, center = 300.0
    static let outer = 290.0, zodiacInner = 250.0, planetRadius = 218.0, houseInner = 95.0, aspectRadius = 92.0

    static func render(_ chart: NatalChart, theme: Theme) -> String {
        let p = theme == .dark ? Palette.dark : Palette.light
        let asc = chart.houses.ascendant
        /// Screen point of an ecliptic longitude at a radius.
        func point(_ longitude: Double, _ radius: Double) -> (Double, Double) {
            let phi = (180 + longitude - asc) * .pi / 180
            return (center + radius * cos(phi), center - radius * sin(phi))
        }
        func f(_ x: Double) -> String { String(format: "%.2f", x) }
        var svg: [String] = []
        // U+FE0E asks for the text (not emoji) form of the glyphs.
        let text = "\u{FE0E}"
        svg.append(#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 600 600" width="600" height="600" font-family="'DejaVu Sans', 'Noto Sans Symbols', 'Segoe UI Symbol', sans-serif">"#)
        svg.append("<title>Natal chart</title>")
        svg.append(#"<rect width="600" height="600" fill="\#(p.background)"/>"#)
        svg.append(#"<circle cx="300" cy="300" r="\#(outer)" fill="\#(p.ring)" stroke="\#(p.ink)" stroke-width="1.5"/>"#)
        svg.append(#"<circle cx="300" cy="300" r="\#(zodiacInner)" fill="\#(p.background)" stroke="\#(p.ink)" stroke-width="1"/>"#)
        svg.append(#"<circle cx="300" cy="300" r="\#(houseInner)" fill="none" stroke="\#(p.faint)" stroke-width="1"/>"#)
        // Signs: boundaries every 30°, glyph in the middle, coloured by element.
        for i in 0..<12 {
            let start = Double(i) * 30
            let (x1, y1) = point(start, zodiacInner), (x2, y2) = point(start, outer)
            svg.append(#"<line x1="\#(f(x1))" y1="\#(f(y1))" x2="\#(f(x2))" y2="\#(f(y2))" stroke="\#(p.ink)" stroke-width="1"/>"#)
            let (gx, gy) = point(start + 15, (outer + zodiacInner) / 2)
            svg.append(#"<text class="sign" x="\#(f(gx))" y="\#(f(gy))" font-size="22" text-anchor="middle" dominant-baseline="central" fill="\#(elementColors[i % 4])">\#(signGlyphs[i])\#(text)</text>"#)
        }
        // House cusps, numbered just inside the ring.
        for (i, cusp) in chart.houses.cusps.enumerated() {
            let (x1, y1) = point(cusp, houseInner), (x2, y2) = point(cusp, zodiacInner)
            let angular = i % 3 == 0
            svg.append(#"<line class="cusp" x1="\#(f(x1))" y1="\#(f(y1))" x2="\#(f(x2))" y2="\#(f(y2))" stroke="\#(angular ? p.ink : p.faint)" stroke-width="\#(angular ? 1.6 : 1)"/>"#)
            let next = chart.houses.cusps[(i + 1) % 12]
            let middle = cusp + Angle.normalize(next - cusp) / 2
            let (nx, ny) = point(middle, houseInner + 14)
            svg.append(#"<text x="\#(f(nx))" y="\#(f(ny))" font-size="11" text-anchor="middle" dominant-baseline="central" fill="\#(p.faint)">\#(i + 1)</text>"#)
        }
        // Ascendant and MC: heavy marks across the zodiac ring, labelled outside the reading circle.
        for (label, longitude) in [("ASC", asc), ("MC", chart.houses.midheaven)] {
            let (x1, y1) = point(longitude, houseInner), (x2, y2) = point(longitude, outer + 6)
            svg.append(#"<line class="\#(label.lowercased())" x1="\#(f(x1))" y1="\#(f(y1))" x2="\#(f(x2))" y2="\#(f(y2))" stroke="\#(p.accent)" stroke-width="3"/>"#)
            let (lx, ly) = point(longitude + 5, zodiacInner - 12)  // beside the mark, not on it
            svg.append(#"<text x="\#(f(lx))" y="\#(f(ly))" font-size="12" font-weight="bold" text-anchor="middle" dominant-baseline="central" fill="\#(p.accent)">\#(label)</text>"#)
        }
        // Aspects between the planets, inside the houses.
        let longitudes = Dictionary(uniqueKeysWithValues: chart.planets.map { ($0.body, $0.longitude) })
        for aspect in chart.aspects where aspect.type != .conjunction {
            guard let a = longitudes[aspect.first], let b = longitudes[aspect.second] else { continue }
            let (x1, y1) = point(a, aspectRadius), (x2, y2) = point(b, aspectRadius)
            svg.append(#"<line class="aspect" x1="\#(f(x1))" y1="\#(f(y1))" x2="\#(f(x2))" y2="\#(f(y2))" stroke="\#(aspectColors[aspect.type] ?? p.faint)" stroke-width="\#(aspect.orb < 2 ? 1.4 : 0.8)" stroke-opacity="0.8"/>"#)
        }
        // Planets: glyph at the longitude, pulled inwards when crowded; a tick on the zodiac ring marks the exact degree.
        var placed: [(Double, Double)] = []  // (longitude, radius)
        for planet in chart.planets.sorted(by: { $0.longitude < $1.longitude }) {
            var radius = planetRadius
            while placed.contains(where: { Angle.separation($0.0, planet.longitude) < 7 && abs($0.1 - radius) < 20 }) { radius -= 22 }
            placed.append((planet.longitude, radius))
            let (tx1, ty1) = point(planet.longitude, zodiacInner), (tx2, ty2) = point(planet.longitude, zodiacInner - 8)
            svg.append(#"<line x1="\#(f(tx1))" y1="\#(f(ty1))" x2="\#(f(tx2))" y2="\#(f(ty2))" stroke="\#(p.ink)" stroke-width="1.5"/>"#)
            let (x, y) = point(planet.longitude, radius)
            let glyph = bodyGlyphs[planet.body] ?? "?"
            let retro = planet.retrograde ? #"<tspan font-size="10" dx="1">℞</tspan>"# : ""
            svg.append(#"<text class="planet" data-body="\#(planet.body.rawValue)" x="\#(f(x))" y="\#(f(y))" font-size="20" text-anchor="middle" dominant-baseline="central" fill="\#(p.ink)">\#(glyph)\#(text)\#(retro)</text>"#)
        }
        svg.append("</svg>")
        return svg.joined(separator: "\n")
    }
}
