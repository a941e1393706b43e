import Foundation

/// Symbi's evolved ghost pet, drawn locally as an SVG document (a cute Kiro-style ghost on a Halloween night sky).
///
/// It is the generator that works without any image model, so an evolution always has a picture. Everything follows
/// from `(stage, seed, tone)`: FNV-1a 64 of the seed starts a SplitMix64 stream per drawing part, and every number
/// is written by hand with fixed decimals, so the same inputs give byte-identical SVG on every run and platform. Each
/// part (sky, body, face, drips, …) has its own stream, so a pet keeps its hue, face and sky as it evolves and only
/// gains pieces. The seed picks the body colour inside Symbi's purple (#6B46C1…#9333EA), the eye shape (round,
/// almond or sleepy), drips, stars, trail curve and tilt. A `dark` tone (a negative mood) gets a darker sky and body,
/// more and longer drips, red glowing eyes, worried brows and a fanged frown.
///
/// Accessories accumulate — stage N shows everything stage N − 1 did, plus:
/// 1. the ghost: dome head, scalloped hem with drips, glowing eyes, a misty trail;
/// 2. a glowing aura around the silhouette;
/// 3. a witch hat;
/// 4. two bats;
/// 5. a jack-o'-lantern;
/// 6. a starry scarf;
/// 7. three spirit orbs;
/// 8 and above: a floating candle and two more orbs.
/// Up to stage 8 the body also grows a little, gains hem scallops and a longer trail.
///
/// Only paths, circles, ellipses and gradients are used: a blur filter cost more than the whole picture, and large
/// radial gradients are the next most expensive thing, so glows stay small and the sky and fog are linear. librsvg
/// renders the busiest stage at 1024×1024 in about 30–50 ms.
public struct GhostDrawing: Sendable, Equatable {
    /// How the pet felt when it evolved: negative moods are drawn darker, with more prominent scary elements (Req 12.5).
    public enum Tone: String, Sendable { case bright, calm, dark }

    /// 1, 2, 3 …; anything below 1 counts as 1, and nothing more is added after stage 8.
    public let stage: Int
    /// Chooses the variations; only its hash is used, it never appears in the SVG.
    public let seed: String
    public let tone: Tone

    /// The stage from which nothing more is added.
    static let fullStage = 8

    public init(stage: Int, seed: String, tone: Tone) {
        self.stage = max(1, stage)
        self.seed = seed
        self.tone = tone
    }

    /// The tone of a pet state as the wire names it: vibrant, active, rested, calm → bright/calm; sad, tired, stressed, anxious → dark; resting → calm; anything unknown → calm.
    public static func tone(ofState state: String) -> Tone {
        switch state.lowercased() {
        case "vibrant", "active": .bright
        case "sad", "tired", "stressed", "anxious": .dark
        default: .calm
        }
    }

    /// The picture: a square SVG document, viewBox 0 0 1024 1024, width="1024" height="1024".
    public var svg: String {
        var sketch = Sketch(level: min(stage, Self.fullStage), seed: seed, tone: tone)
        return sketch.draw()
    }
}

// MARK: - Randomness and numbers

/// SplitMix64 over FNV-1a 64 of the seed, a zero byte and the stream name: stable everywhere, unlike `Hasher`.
private struct Random {
    private var state: UInt64

    init(seed: String, stream: String) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in Array(seed.utf8) + [0] + Array(stream.utf8) {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        state = hash
    }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }
    mutating func range(_ low: Double, _ high: Double) -> Double { low + (high - low) * unit() }
    mutating func below(_ count: Int) -> Int { Int(next() % UInt64(count)) }
    mutating func sign() -> Double { next() & 1 == 0 ? -1 : 1 }
}

/// Fixed decimals, `.` always, no locale and no `-0.0`: the SVG must not depend on where it is made.
private func n(_ x: Double, _ places: Int = 1) -> String {
    let unit = (0..<places).reduce(1) { power, _ in power * 10 }
    let scaled = Int((x * Double(unit)).rounded()), magnitude = abs(scaled)
    let fraction = String(magnitude % unit)
    return (scaled < 0 ? "-" : "") + String(magnitude / unit) + "."
        + String(repeating: "0", count: places - fraction.count) + fraction
}

private struct Point {
    var x, y: Double
    init(_ x: Double, _ y: Double) { (self.x, self.y) = (x, y) }
}

private struct RGB {
    var r, g, b: Double

    init(_ hex: UInt32) {
        r = Double(hex >> 16 & 0xff)
        g = Double(hex >> 8 & 0xff)
        b = Double(hex & 0xff)
    }

    init(r: Double, g: Double, b: Double) { (self.r, self.g, self.b) = (r, g, b) }

    func mix(_ other: RGB, _ t: Double) -> RGB {
        RGB(r: r + (other.r - r) * t, g: g + (other.g - g) * t, b: b + (other.b - b) * t)
    }

    var hex: String {
        "#" + [r, g, b].map { value in
            let byte = String(Int(value.rounded()), radix: 16, uppercase: true)
            return byte.count == 1 ? "0" + byte : byte
        }.joined()
    }
}

// MARK: - The drawing

/// Colours of one picture; `body` always lies on the segment #6B46C1 → #9333EA.
private struct Palette {
    let body, light, shade, outline: RGB
    let skyMiddle, skyEdge: RGB
    let glow, glowCore, socket: RGB

    init(tone: GhostDrawing.Tone, random: inout Random) {
        let (low, high): (Double, Double) = switch tone {
        case .bright: (0.45, 1.0)
        case .calm: (0.25, 0.8)
        case .dark: (0.0, 0.3)
        }
        body = RGB(0x6B46C1).mix(RGB(0x9333EA), random.range(low, high))
        let black = RGB(0x0A0414), white = RGB(0xFFFFFF)
        light = body.mix(white, tone == .dark ? 0.22 : 0.38)
        shade = body.mix(black, tone == .dark ? 0.42 : 0.28)
        outline = body.mix(black, tone == .dark ? 0.62 : 0.5)
        socket = RGB(0x1A0A2E)
        switch tone {
        case .bright: (skyMiddle, skyEdge, glow, glowCore) = (RGB(0x3D1F73), RGB(0x120A2B), RGB(0xFFC94D), RGB(0xFFF6CC))
        case .calm: (skyMiddle, skyEdge, glow, glowCore) = (RGB(0x2B2462), RGB(0x0B0D26), RGB(0x5EEAD4), RGB(0xE6FFFA))
        case .dark: (skyMiddle, skyEdge, glow, glowCore) = (RGB(0x1E0F33), RGB(0x040208), RGB(0xFF3D6E), RGB(0xFFD1DC))
        }
    }
}

/// Where the ghost is: its head is a half-circle of radius `w` around (`cx`, `cy`), its hem a row of lobes at `hemY`.
private struct Figure {
    let cx = 512.0, w: Double, top: Double, hemY: Double, lobes: Int, lobeDepth: Double, tilt: Double
    var cy: Double { top + w }
    /// Hem ends, a little wider than the head so the body reads as a soft bell.
    var hemHalf: Double { w + 22 }

    init(level: Int, random: inout Random) {
        let grown = Double(level - 1)
        w = 176 + 4 * grown
        top = 290 - 2 * grown
        hemY = top + w + 218 + 3 * grown
        lobes = 4 + (level - 1) / 2
        lobeDepth = random.range(40, 50)
        tilt = random.sign() * random.range(2, 7)
    }

    /// Two points on the outline of lobe `i` around its parameter `t`, about `width` apart: where a drip leaves it.
    func lobeEdge(_ i: Int, at t: Double, width: Double) -> (Point, Point) {
        let span = 2 * hemHalf / Double(lobes), x0 = cx + hemHalf - span * Double(i)
        let delta = min(0.3, width / (3 * span))
        func point(_ t: Double) -> Point {
            let u = 1 - t
            return Point(x0 - span * (3 * u * t * t + t * t * t), hemY + lobeDepth * 3 * u * t)
        }
        let (p, q) = (point(t + delta), point(t - delta))
        return p.x < q.x ? (p, q) : (q, p)
    }
}

private struct Sketch {
    let level: Int, seed: String, tone: GhostDrawing.Tone
    let palette: Palette, figure: Figure
    /// +1 when the moon is on the right; the props are mirrored with it so nothing collides.
    let side: Double
    var out = ""

    init(level: Int, seed: String, tone: GhostDrawing.Tone) {
        (self.level, self.seed, self.tone) = (level, seed, tone)
        var random = Random(seed: seed, stream: "body")
        palette = Palette(tone: tone, random: &random)
        figure = Figure(level: level, random: &random)
        side = random.sign()
    }

    /// How far the misty tail reaches below the hem.
    var trailLength: Double { 120 + 16 * Double(level - 1) }

    func random(_ stream: String) -> Random { Random(seed: seed, stream: stream) }
    mutating func add(_ line: String) { out += line + "\n" }
    /// x mirrored to the moon's side: layouts are written for a moon on the right.
    func mx(_ x: Double) -> Double { side > 0 ? x : 1024 - x }

    mutating func draw() -> String {
        add("<svg xmlns='http://www.w3.org/2000/svg' width='1024' height='1024' viewBox='0 0 1024 1024'>")
        definitions()
        sky()
        add("<g transform='rotate(\(n(figure.tilt)) 512 \(n(figure.cy)))'>")
        trail()
        if level >= 2 { aura() }
        body()
        drips()
        if level >= 6 { scarf() }
        face()
        if level >= 3 { hat() }
        add("</g>")
        if level >= 4 { bats() }
        if level >= 5 { lantern(x: mx(190), y: 800) }
        if level >= 8 { candle(x: mx(838), y: 790) }
        if level >= 7 { orbs() }
        add("</svg>")
        return out
    }

    mutating func definitions() {
        let p = palette, f = figure
        func stop(_ offset: String, _ color: RGB, _ opacity: Double = 1) -> String {
            "<stop offset='\(offset)' stop-color='\(color.hex)' stop-opacity='\(n(opacity))'/>"
        }
        func radial(_ id: String, _ stops: String...) -> String {
            "<radialGradient id='\(id)'>" + stops.joined() + "</radialGradient>"
        }
                add("<defs>")
        add("<linearGradient id='sky' x1='0' y1='0' x2='0' y2='1'>" + stop("0", p.skyEdge) + stop("0.55", p.skyMiddle) + stop("1", p.skyEdge) + "</linearGradient>")
        add(radial("moonGlow", stop("0", RGB(0xFFF1C1), tone == .dark ? 0.22 : 0.35), stop("1", RGB(0xFFF1C1), 0)))
        add("<linearGradient id='fog' x1='0' y1='0' x2='0' y2='1'>" + stop("0", RGB(0xC4B5FD), 0) + stop("0.6", RGB(0xC4B5FD), tone == .dark ? 0.08 : 0.15) + stop("1", RGB(0xC4B5FD), 0.04) + "</linearGradient>")
        add(radial("eyeGlow", stop("0", p.glow, tone == .dark ? 0.75 : 0.5), stop("1", p.glow, 0)))
        add("<radialGradient id='eye' cx='0.5' cy='0.68' r='0.62'>" + stop("0", p.glowCore) + stop("0.38", p.glow) + stop("1", p.socket) + "</radialGradient>")
        add("<radialGradient id='skin' gradientUnits='userSpaceOnUse' cx='\(n(f.cx - 0.35 * f.w))' cy='\(n(f.cy - 0.5 * f.w))' r='\(n(2.1 * f.w))'>"
            + stop("0", p.light) + stop("0.4", p.body) + stop("1", p.shade) + "</radialGradient>")
        add("<linearGradient id='trail' gradientUnits='userSpaceOnUse' x1='0' y1='\(n(f.hemY - 40))' x2='0' y2='\(n(f.hemY + trailLength))'>"
            + stop("0", p.body.mix(RGB(0xFFFFFF), 0.5), 0.75) + stop("1", p.light, 0) + "</linearGradient>")
        add(radial("warm", stop("0", RGB(0xFFB347), 0.55), stop("1", RGB(0xFF7A1A), 0)))
        add("<linearGradient id='orbTail' x1='0' y1='0' x2='0' y2='1'>" + stop("0", RGB(0xCFF8FF), 0.8) + stop("1", RGB(0x8BE3F5), 0) + "</linearGradient>")
        add(radial("orbGlow", stop("0", RGB(0xBDF4FF), 0.55), stop("1", RGB(0x9AD7FF), 0)))
        add("<radialGradient id='orb' cx='0.5' cy='0.62' r='0.6'>" + stop("0", RGB(0xFFFFFF)) + stop("1", RGB(0x8BE3F5)) + "</radialGradient>")
        add("</defs>")
    }

    mutating func sky() {
        var random = random("sky")
        let moonX = mx(836), moonY = 168.0
        add("<rect width='1024' height='1024' fill='url(#sky)'/>")
        for _ in 0..<48 {
            let x = random.range(8, 1016), y = random.range(8, 780)
            let r = random.range(0.9, 2.6), opacity = random.range(0.35, 0.95)
            if hypot(x - moonX, y - moonY) < 100 { continue }
            add("<circle cx='\(n(x))' cy='\(n(y))' r='\(n(r))' fill='#FFF7E0' fill-opacity='\(n(opacity))'/>")
        }
        for _ in 0..<5 {
            let x = random.range(40, 984), y = random.range(40, 600), r = random.range(7, 13)
            if hypot(x - moonX, y - moonY) < 120 { continue }
            add("<path d='\(sparkle(x, y, r))' fill='#FFF7E0' fill-opacity='0.85'/>")
        }
        add("<circle cx='\(n(moonX))' cy='\(n(moonY))' r='170' fill='url(#moonGlow)'/>")
        add("<circle cx='\(n(moonX))' cy='\(n(moonY))' r='64' fill='\(tone == .dark ? "#E8D5B0" : "#FFF4D6")'/>")
        for (dx, dy, r) in [(-22.0, -14.0, 12.0), (18, 16, 9), (-4, 30, 6)] {
            add("<circle cx='\(n(moonX + dx))' cy='\(n(moonY + dy))' r='\(n(r))' fill='#D9C7A3' fill-opacity='0.5'/>")
        }
        // Fog banks: wavy shapes whose gradient starts transparent, so their tops melt into the sky.
        for (y, phase) in [(800.0, random.range(0, 200)), (880, random.range(0, 200))] {
            var d = "M0,1024L0,\(n(y))"
            for k in 0..<5 {
                let x0 = Double(k) * 256 - phase, bump = random.range(30, 60)
                d += "Q\(n(x0 + 128)),\(n(y - bump)) \(n(x0 + 256)),\(n(y))"
            }
            add("<path d='\(d)L1024,\(n(y))L1024,1024Z' fill='url(#fog)'/>")
        }
    }

    /// A four-pointed twinkle.
    func sparkle(_ x: Double, _ y: Double, _ r: Double) -> String {
        let k = r * 0.22
        return "M\(n(x)),\(n(y - r))Q\(n(x + k)),\(n(y - k)) \(n(x + r)),\(n(y))Q\(n(x + k)),\(n(y + k)) \(n(x)),\(n(y + r))"
            + "Q\(n(x - k)),\(n(y + k)) \(n(x - r)),\(n(y))Q\(n(x - k)),\(n(y - k)) \(n(x)),\(n(y - r))Z"
    }

    /// A glow hugging the silhouette: faint, growing copies of the body are far cheaper to render than a blur
    /// filter or wide strokes.
    mutating func aura() {
        let f = figure, outline = bodyPath(), color = palette.body.mix(RGB(0xFFFFFF), 0.55).hex
        let midY = (f.top + f.hemY) / 2
        for layer in (0..<6).reversed() {
            let scale = 1.04 + 0.045 * Double(layer)
            let matrix = "\(n(scale, 3)) 0 0 \(n(scale, 3)) \(n(f.cx * (1 - scale))) \(n(midY * (1 - scale)))"
            add("<path d='\(outline)' transform='matrix(\(matrix))' fill='\(color)' fill-opacity='0.05'/>")
        }
        // Twinkles caught in the glow, beside the head where hat and bats never reach.
        var random = random("aura")
        for (flank, low, high) in [(-1.0, 5.0, 35.0), (1, 5, 35), (random.sign(), -35, -15)] {
            let angle = random.range(low, high) * .pi / 180, reach = f.w + random.range(40, 60)
            let x = f.cx + flank * reach * cos(angle), y = f.cy - reach * sin(angle)
            add("<path d='\(sparkle(x, y, random.range(9, 14)))' fill='\(palette.glowCore.hex)' fill-opacity='0.9'/>")
        }
    }

    /// A misty tail sweeping down from behind the hem and curling up at its tip; from stage 4 a smaller one curls
    /// out on the other side. Both grow with the stage.
    mutating func trail() {
        var random = random("trail")
        let f = figure, l = trailLength, d = random.sign(), curl = random.range(0.9, 1.1) * f.w
        let main = taper(Point(f.cx - d * 0.25 * f.w, f.hemY - 60), Point(f.cx - d * 0.1 * f.w, f.hemY + 0.9 * l),
                         Point(f.cx + d * 0.8 * curl, f.hemY + 1.1 * l), Point(f.cx + d * curl, f.hemY + 0.5 * l), width: 0.8 * f.w)
        add("<path d='\(main)' fill='url(#trail)'/>")
        guard level >= 4 else { return }
        let second = taper(Point(f.cx - d * 0.45 * f.w, f.hemY - 60), Point(f.cx - d * 0.5 * f.w, f.hemY + 0.42 * l),
                         Point(f.cx - d * 0.9 * curl, f.hemY + 0.48 * l), Point(f.cx - d * 0.95 * curl, f.hemY + 0.21 * l), width: 0.45 * f.w)
        add("<path d='\(second)' fill='url(#trail)' fill-opacity='0.7'/>")
    }

    /// A cubic Bézier widened into a shape that thins to a point: mist and wisps without blur filters.
    func taper(_ p0: Point, _ p1: Point, _ p2: Point, _ p3: Point, width: Double) -> String {
        let steps = 24
        var left: [String] = [], right: [String] = []
        for i in 0...steps {
            let t = Double(i) / Double(steps), u = 1 - t
            let x = u * u * u * p0.x + 3 * u * u * t * p1.x + 3 * u * t * t * p2.x + t * t * t * p3.x
            let y = u * u * u * p0.y + 3 * u * u * t * p1.y + 3 * u * t * t * p2.y + t * t * t * p3.y
            let dx = 3 * u * u * (p1.x - p0.x) + 6 * u * t * (p2.x - p1.x) + 3 * t * t * (p3.x - p2.x)
            let dy = 3 * u * u * (p1.y - p0.y) + 6 * u * t * (p2.y - p1.y) + 3 * t * t * (p3.y - p2.y)
            let scale = width / 2 * (1 - t) / max(hypot(dx, dy), 1e-9)
            left.append("\(n(x - dy * scale)),\(n(y + dx * scale))")
            right.append("\(n(x + dy * scale)),\(n(y - dx * scale))")
        }
        return "M" + left.joined(separator: "L") + "L" + right.reversed().joined(separator: "L") + "Z"
    }

    /// The ghost's silhouette: bell sides, a dome head and rounded lobes along the hem.
    func bodyPath() -> String {
        let f = figure, half = f.hemHalf, k = f.lobeDepth
        var d = "M\(n(f.cx - half)),\(n(f.hemY))"
        d += "C\(n(f.cx - half - 6)),\(n(f.hemY - 80)) \(n(f.cx - f.w - 4)),\(n(f.cy + 110)) \(n(f.cx - f.w)),\(n(f.cy))"
        d += "A\(n(f.w)),\(n(f.w * 1.04)) 0 0 1 \(n(f.cx + f.w)),\(n(f.cy))"
        d += "C\(n(f.cx + f.w + 4)),\(n(f.cy + 110)) \(n(f.cx + half + 6)),\(n(f.hemY - 80)) \(n(f.cx + half)),\(n(f.hemY))"
        let span = 2 * half / Double(f.lobes)
        for i in 0..<f.lobes {
            let x0 = f.cx + half - span * Double(i), x1 = x0 - span
            d += "C\(n(x0)),\(n(f.hemY + k)) \(n(x1)),\(n(f.hemY + k)) \(n(x1)),\(n(f.hemY))"
        }
        return d + "Z"
    }

    mutating func body() {
        let f = figure
        add("<path d='\(bodyPath())' fill='url(#skin)' stroke='\(palette.outline.hex)' stroke-width='6' stroke-linejoin='round'/>")
        add("<ellipse cx='\(n(f.cx - 0.45 * f.w))' cy='\(n(f.cy - 0.52 * f.w))' rx='\(n(0.2 * f.w))' ry='\(n(0.1 * f.w))' transform='rotate(-38 \(n(f.cx - 0.45 * f.w)) \(n(f.cy - 0.52 * f.w)))' fill='#FFFFFF' fill-opacity='0.3'/>")
    }

    /// Goo running off the hem: each drip leaves the lobe outline and ends in a bulb; drawn over the body with the
    /// same gradient, so the join is seamless and only the drip's own edge is outlined.
    mutating func drips() {
        var random = random("drips")
        let f = figure
        let count = tone == .dark ? (f.lobes >= 6 ? 4 : 3) : 2
        let (shortest, longest) = tone == .dark ? (56.0, 104.0) : (34.0, 60.0)
        // Inner lobes first: a drip on an end lobe reads as a foot.
        var inner = Array(1..<(f.lobes - 1)), outer = [0, f.lobes - 1]
        for _ in 0..<count {
            let lobe = inner.isEmpty ? outer.remove(at: random.below(outer.count)) : inner.remove(at: random.below(inner.count))
            let (a, b) = f.lobeEdge(lobe, at: random.range(0.3, 0.7), width: 48)
            let x = (a.x + b.x) / 2, top = max(a.y, b.y)
            let length = random.range(shortest, longest), r = random.range(11, 14), neck = 8.5
            let bulb = top + length - r
            let edge = "M\(n(a.x)),\(n(a.y))C\(n(x - neck - 2)),\(n(a.y + 2)) \(n(x - neck)),\(n(top + 8)) \(n(x - neck)),\(n(top + 0.4 * length))"
                + "C\(n(x - neck)),\(n(bulb - r * 1.1)) \(n(x - r)),\(n(bulb - r)) \(n(x - r)),\(n(bulb))A\(n(r)),\(n(r)) 0 0 0 \(n(x + r)),\(n(bulb))"
                + "C\(n(x + r)),\(n(bulb - r)) \(n(x + neck)),\(n(bulb - r * 1.1)) \(n(x + neck)),\(n(top + 0.4 * length))"
                + "C\(n(x + neck)),\(n(top + 8)) \(n(x + neck + 2)),\(n(b.y + 2)) \(n(b.x)),\(n(b.y))"
            add("<path d='\(edge)Z' fill='url(#skin)'/>")
            add("<path d='\(edge)' fill='none' stroke='\(palette.outline.hex)' stroke-width='5' stroke-linecap='round' stroke-linejoin='round'/>")
            add("<circle cx='\(n(x - r * 0.35))' cy='\(n(bulb - r * 0.2))' r='\(n(r * 0.28))' fill='#FFFFFF' fill-opacity='0.45'/>")
        }
    }

    mutating func face() {
        var random = random("face")
        let f = figure, p = palette
        let variant = random.below(3)
        let eyeY = f.cy + 0.04 * f.w, rx = 0.2 * f.w, ry = 0.27 * f.w
        for s in [-1.0, 1.0] {
            let ex = f.cx + s * 0.4 * f.w
            add("<circle cx='\(n(ex))' cy='\(n(eyeY))' r='\(n(rx * (tone == .dark ? 2.6 : 2.1)))' fill='url(#eyeGlow)'/>")
            switch variant {
            case 1:
                // Almond: pointed corners, the outer one raised.
                let outer = ex + s * rx * 1.12, inner = ex - s * rx * 1.12
                add("<path d='M\(n(inner)),\(n(eyeY + 0.1 * ry))C\(n(inner)),\(n(eyeY - 1.05 * ry)) \(n(outer)),\(n(eyeY - 1.25 * ry)) \(n(outer)),\(n(eyeY - 0.25 * ry))"
                    + "C\(n(outer)),\(n(eyeY + 1.1 * ry)) \(n(inner)),\(n(eyeY + 1.15 * ry)) \(n(inner)),\(n(eyeY + 0.1 * ry))Z' fill='url(#eye)'/>")
            default:
                add("<ellipse cx='\(n(ex))' cy='\(n(eyeY))' rx='\(n(rx))' ry='\(n(ry))' fill='url(#eye)'/>")
            }
            if variant == 2 {
                // Sleepy: a heavy upper lid of the same skin, with a lash line.
                let lidY = eyeY - 0.12 * ry
                add("<path d='M\(n(ex - rx - 4)),\(n(lidY))A\(n(rx + 4)),\(n(ry + 4)) 0 0 1 \(n(ex + rx + 4)),\(n(lidY))Q\(n(ex)),\(n(lidY + 0.3 * ry)) \(n(ex - rx - 4)),\(n(lidY))Z' fill='url(#skin)'/>")
                add("<path d='M\(n(ex - rx - 2)),\(n(lidY))Q\(n(ex)),\(n(lidY + 0.3 * ry)) \(n(ex + rx + 2)),\(n(lidY))' fill='none' stroke='\(p.socket.hex)' stroke-width='6' stroke-linecap='round'/>")
                add("<circle cx='\(n(ex - 0.35 * rx))' cy='\(n(eyeY + 0.3 * ry))' r='\(n(0.2 * rx))' fill='#FFFFFF' fill-opacity='0.9'/>")
            } else {
                add("<circle cx='\(n(ex - 0.32 * rx))' cy='\(n(eyeY - 0.38 * ry))' r='\(n(0.3 * rx))' fill='#FFFFFF' fill-opacity='0.95'/>")
                add("<circle cx='\(n(ex + 0.3 * rx))' cy='\(n(eyeY + 0.15 * ry))' r='\(n(0.13 * rx))' fill='#FFFFFF' fill-opacity='0.8'/>")
            }
            if tone == .dark {
                // Worried brows: inner ends raised.
                let browY = eyeY - ry - 0.12 * f.w
                add("<path d='M\(n(ex + s * 0.8 * rx)),\(n(browY + 0.06 * f.w))Q\(n(ex)),\(n(browY - 0.02 * f.w)) \(n(ex - s * 0.75 * rx)),\(n(browY - 0.08 * f.w))' fill='none' stroke='\(p.socket.hex)' stroke-width='9' stroke-linecap='round'/>")
            } else {
                add("<ellipse cx='\(n(f.cx + s * 0.66 * f.w))' cy='\(n(eyeY + 0.42 * f.w))' rx='\(n(0.11 * f.w))' ry='\(n(0.06 * f.w))' fill='#F9A8D4' fill-opacity='0.45'/>")
            }
        }
        mouth(y: f.cy + 0.42 * f.w)
    }

    mutating func mouth(y: Double) {
        let f = figure, p = palette, w = f.w, x = f.cx
        func fang(_ fx: Double, _ fy: Double, _ down: Double) -> String {
            "<path d='M\(n(fx - 0.035 * w)),\(n(fy))L\(n(fx + 0.035 * w)),\(n(fy))L\(n(fx)),\(n(fy + down))Z' fill='#FFFFFF'/>"
        }
        switch tone {
        case .bright:
            add("<path d='M\(n(x - 0.16 * w)),\(n(y))Q\(n(x)),\(n(y + 0.36 * w)) \(n(x + 0.16 * w)),\(n(y))Z' fill='\(p.socket.hex)' stroke='\(p.socket.hex)' stroke-width='6' stroke-linejoin='round'/>")
            add("<ellipse cx='\(n(x))' cy='\(n(y + 0.12 * w))' rx='\(n(0.07 * w))' ry='\(n(0.04 * w))' fill='#F472B6'/>")
            add(fang(x - 0.08 * w, y, 0.07 * w))
        case .calm:
            add("<path d='M\(n(x - 0.1 * w)),\(n(y))Q\(n(x)),\(n(y + 0.12 * w)) \(n(x + 0.1 * w)),\(n(y))' fill='none' stroke='\(p.socket.hex)' stroke-width='8' stroke-linecap='round'/>")
        case .dark:
            let top = y + 0.02 * w
            add("<path d='M\(n(x - 0.15 * w)),\(n(top + 0.1 * w))Q\(n(x)),\(n(top - 0.14 * w)) \(n(x + 0.15 * w)),\(n(top + 0.1 * w))Q\(n(x)),\(n(top + 0.02 * w)) \(n(x - 0.15 * w)),\(n(top + 0.1 * w))Z' fill='\(p.socket.hex)' stroke='\(p.socket.hex)' stroke-width='6' stroke-linejoin='round'/>")
            add(fang(x - 0.06 * w, top - 0.005 * w, 0.07 * w))
            add(fang(x + 0.06 * w, top - 0.005 * w, 0.07 * w))
        }
    }

    /// A witch hat sitting on the dome, tipped to one side.
    mutating func hat() {
        var random = random("hat")
        let f = figure, w = f.w
        let lean = side, angle = lean * random.range(8, 15)
        let baseY = f.top + 0.16 * w, h = 1.0 * w, half = 0.44 * w
        add("<g transform='translate(512 \(n(baseY))) rotate(\(n(angle)))'>")
        add("<ellipse cx='0' cy='0' rx='\(n(0.8 * w))' ry='\(n(0.17 * w))' fill='#1F1235' stroke='#3B2463' stroke-width='5'/>")
        let tipX = lean * 0.42 * w, tipY = -h
        add("<path d='M\(n(-half)),\(n(-0.02 * w))C\(n(-0.36 * w)),\(n(-0.45 * h)) \(n(-0.12 * w)),\(n(-0.85 * h)) \(n(tipX)),\(n(tipY))"
            + "C\(n(0.06 * w)),\(n(-0.78 * h)) \(n(0.34 * w)),\(n(-0.45 * h)) \(n(half)),\(n(-0.02 * w))Z' fill='#241540' stroke='#3B2463' stroke-width='5' stroke-linejoin='round'/>")
        add("<path d='M\(n(-half)),\(n(-0.03 * w))L\(n(half)),\(n(-0.03 * w))L\(n(half - 0.035 * w)),\(n(-0.17 * w))L\(n(-half + 0.035 * w)),\(n(-0.17 * w))Z' fill='#F97316'/>")
        add("<rect x='\(n(-0.08 * w))' y='\(n(-0.165 * w))' width='\(n(0.16 * w))' height='\(n(0.13 * w))' rx='4' fill='none' stroke='#FDE047' stroke-width='6'/>")
        add("</g>")
    }

    /// A starry scarf wrapped under the face, knotted on one side with two hanging ends.
    mutating func scarf() {
        var random = random("scarf")
        let f = figure, w = f.w, y = f.cy + 0.6 * w, band = 0.19 * w, edge = w + 6, sag = 0.2 * w
        let knot = random.sign(), kx = f.cx + knot * 0.52 * w, ky = y + band / 2 + 0.08 * w
        let cloth = "fill='#1E40AF' stroke='#172554' stroke-width='4' stroke-linejoin='round'"
        for (lean, length) in [(0.05, 0.62), (0.32, 0.5)] {
            let end = kx + knot * lean * w
            add("<path d='M\(n(kx - 0.08 * w)),\(n(ky))L\(n(end - 0.09 * w)),\(n(ky + length * w))L\(n(end - 0.03 * w)),\(n(ky + length * w - 10))L\(n(end + 0.03 * w)),\(n(ky + length * w))L\(n(end + 0.09 * w)),\(n(ky + length * w - 10))L\(n(kx + 0.08 * w)),\(n(ky))Z' \(cloth)/>")
        }
        add("<path d='M\(n(f.cx - edge)),\(n(y))Q\(n(f.cx)),\(n(y + 2 * sag)) \(n(f.cx + edge)),\(n(y))L\(n(f.cx + edge)),\(n(y + band))Q\(n(f.cx)),\(n(y + band + 2 * sag)) \(n(f.cx - edge)),\(n(y + band))Z' \(cloth)/>")
        for i in 0..<5 {
            let t = Double(i) / 4 * 1.5 - 0.75, sx = f.cx + t * w
            add("<path d='\(sparkle(sx, y + band / 2 + sag * (1 - t * t), 0.05 * w))' fill='#FDE047'/>")
        }
        add("<ellipse cx='\(n(kx))' cy='\(n(ky))' rx='\(n(0.1 * w))' ry='\(n(0.085 * w))' \(cloth)/>")
    }

    mutating func bats() {
        var random = random("bats")
        for (x, y) in [(mx(878), 330.0), (mx(150), 262.0)] {
            let bx = x + random.range(-20, 20), by = y + random.range(-25, 25)
            let scale = random.range(0.85, 1.1), angle = random.range(-14, 14)
            add("<g transform='translate(\(n(bx)) \(n(by))) rotate(\(n(angle))) scale(\(n(scale)))'>")
            // Outlines first, fills on top: one rim around wings and head together, visible on the night sky.
            let wings = "M0,-14C-12,-30 -48,-34 -74,-12Q-62,-10 -56,4Q-46,-6 -36,8Q-26,-2 -12,10L0,18L12,10Q26,-2 36,8Q46,-6 56,4Q62,-10 74,-12C48,-34 12,-30 0,-14Z"
            let head = "M-12,-8L-10,-26L-3,-14L3,-14L10,-26L12,-8Q12,16 0,18Q-12,16 -12,-8Z"
            add("<path d='\(wings)\(head)' fill='none' stroke='#6D4BB0' stroke-width='5' stroke-linejoin='round'/>")
            add("<path d='\(wings)\(head)' fill='#120821'/>")
            add("<circle cx='-5' cy='-6' r='2.6' fill='\(palette.glow.hex)'/><circle cx='5' cy='-6' r='2.6' fill='\(palette.glow.hex)'/>")
            add("</g>")
        }
    }

    mutating func lantern(x: Double, y: Double) {
        let r = 70.0
        add("<circle cx='\(n(x))' cy='\(n(y))' r='150' fill='url(#warm)'/>")
        add("<path d='M\(n(x - 6)),\(n(y - r * 0.8))Q\(n(x - 4)),\(n(y - r - 22)) \(n(x + 10)),\(n(y - r - 26))L\(n(x + 12)),\(n(y - r - 16))Q\(n(x + 4)),\(n(y - r - 10)) \(n(x + 6)),\(n(y - r * 0.8))Z' fill='#4D7C0F'/>")
        for (dx, rx) in [(-0.45 * r, 0.6 * r), (0.45 * r, 0.6 * r), (0, 0.55 * r)] {
            add("<ellipse cx='\(n(x + dx))' cy='\(n(y))' rx='\(n(rx))' ry='\(n(r * 0.82))' fill='#F97316' stroke='#C2410C' stroke-width='4'/>")
        }
        let glow = "#FDE047"
        add("<path d='M\(n(x - 34)),\(n(y - 8))L\(n(x - 20)),\(n(y - 32))L\(n(x - 8)),\(n(y - 8))Z M\(n(x + 8)),\(n(y - 8))L\(n(x + 20)),\(n(y - 32))L\(n(x + 34)),\(n(y - 8))Z' fill='\(glow)'/>")
        add("<path d='M\(n(x - 38)),\(n(y + 10))Q\(n(x)),\(n(y + 48)) \(n(x + 38)),\(n(y + 10))L\(n(x + 22)),\(n(y + 18))L\(n(x + 12)),\(n(y + 8))L\(n(x)),\(n(y + 20))L\(n(x - 12)),\(n(y + 8))L\(n(x - 22)),\(n(y + 18))Z' fill='\(glow)'/>")
    }

    mutating func candle(x: Double, y: Double) {
        add("<circle cx='\(n(x))' cy='\(n(y - 80))' r='110' fill='url(#warm)'/>")
        add("<ellipse cx='\(n(x))' cy='\(n(y + 52))' rx='46' ry='12' fill='#B45309'/>")
        add("<rect x='\(n(x - 24))' y='\(n(y - 50))' width='48' height='102' rx='8' fill='#FDF2D0'/>")
        // Wax running down from the rim.
        var wax = "M\(n(x - 24)),\(n(y - 44))Q\(n(x - 24)),\(n(y - 50)) \(n(x - 16)),\(n(y - 50))L\(n(x + 16)),\(n(y - 50))"
        wax += "Q\(n(x + 24)),\(n(y - 50)) \(n(x + 24)),\(n(y - 44))L\(n(x + 24)),\(n(y - 18))A5,5 0 0 1 \(n(x + 14)),\(n(y - 18))"
        wax += "L\(n(x + 14)),\(n(y - 32))A5,5 0 0 0 \(n(x + 4)),\(n(y - 32))L\(n(x + 4)),\(n(y - 8))A5,5 0 0 1 \(n(x - 6)),\(n(y - 8))"
        wax += "L\(n(x - 6)),\(n(y - 36))A5,5 0 0 0 \(n(x - 16)),\(n(y - 36))L\(n(x - 16)),\(n(y - 24))A4,4 0 0 1 \(n(x - 24)),\(n(y - 24))Z"
        add("<path d='\(wax)' fill='#FFFBEB'/>")
        add("<path d='M\(n(x)),\(n(y - 50))L\(n(x)),\(n(y - 60))' stroke='#3F2A14' stroke-width='3'/>")
        add("<path d='M\(n(x)),\(n(y - 104))Q\(n(x + 16)),\(n(y - 74)) \(n(x)),\(n(y - 58))Q\(n(x - 16)),\(n(y - 74)) \(n(x)),\(n(y - 104))Z' fill='#FDBA74'/>")
        add("<path d='M\(n(x)),\(n(y - 88))Q\(n(x + 7)),\(n(y - 72)) \(n(x)),\(n(y - 62))Q\(n(x - 7)),\(n(y - 72)) \(n(x)),\(n(y - 88))Z' fill='#FFF7D6'/>")
    }

    /// Spirit orbs: glowing balls trailing a wisp, in fixed slots jittered by the seed.
    mutating func orbs() {
        var random = random("orbs")
        let slots: [(Double, Double)] = [(mx(905), 560), (mx(112), 540), (mx(300), 100), (mx(690), 930), (mx(75), 930)]
        for (x, y) in slots.prefix(level >= 8 ? 5 : 3) {
            let ox = x + random.range(-16, 16), oy = y + random.range(-16, 16), r = random.range(13, 17), lean = random.sign()
            add("<circle cx='\(n(ox))' cy='\(n(oy))' r='\(n(r * 3.4))' fill='url(#orbGlow)'/>")
            let tail = taper(Point(ox, oy), Point(ox + lean * 0.5 * r, oy + 2.2 * r), Point(ox - lean * 1.6 * r, oy + 2.4 * r),
                             Point(ox - lean * 0.6 * r, oy + 4.4 * r), width: 1.9 * r)
            add("<path d='\(tail)' fill='url(#orbTail)'/>")
            add("<circle cx='\(n(ox))' cy='\(n(oy))' r='\(n(r))' fill='url(#orb)'/>")
        }
    }
}
