import Ephemeris
import Foundation

public enum ZodiacSign: String, CaseIterable, Codable, Sendable {
    case aries, taurus, gemini, cancer, leo, virgo, libra, scorpio, sagittarius, capricorn, aquarius, pisces

    static func of(longitude: Double) -> (ZodiacSign, degree: Double) {
        let normalized = Angle.normalize(longitude)
        let index = min(11, Int(normalized / 30))
        return (allCases[index], normalized - Double(index) * 30)
    }
}

public enum AspectType: String, CaseIterable, Codable, Sendable {
    case conjunction, opposition, square, trine, sextile

    public var angle: Double {
        switch self {
        case .conjunction: 0
        case .opposition: 180
        case .square: 90
        case .trine: 120
        case .sextile: 60
        }
    }

    /// Default orbs in degrees (a common modern set: wider for the "hard" conjunction and opposition).
    public var defaultOrb: Double {
        switch self {
        case .conjunction, .opposition: 8
        case .square, .trine: 7
        case .sextile: 5
        }
    }
}

enum Angle {
    static func normalize(_ degrees: Double) -> Double {
        let r = degrees.truncatingRemainder(dividingBy: 360)
        return r < 0 ? r + 360 : r
    }

    /// The smaller angle between two longitudes, in [0, 180].
    static func separation(_ a: Double, _ b: Double) -> Double {
        let d = abs(normalize(a) - normalize(b))
        return d > 180 ? 360 - d : d
    }
}

/// Everything a natal chart shows, computed from positions and houses (no I/O, so tests can feed it directly).
public struct NatalChart: Codable, Sendable {
    public struct Planet: Codable, Sendable {
        public var body: Body
        public var longitude: Double
        public var latitude: Double
        /// Degrees per day in longitude.
        public var speed: Double
        public var sign: ZodiacSign
        public var degreeInSign: Double
        public var retrograde: Bool
        /// 1–12: the house whose cusps bracket the longitude.
        public var house: Int
    }

    public struct HouseSet: Codable, Sendable {
        public var system: HouseSystem
        public var cusps: [Double]
        public var ascendant: Double
        public var midheaven: Double
        public var ascendantSign: ZodiacSign
        public var midheavenSign: ZodiacSign
        /// False when the birth time is unknown: houses, Ascendant and MC move a degree every four minutes.
        public var reliable: Bool
    }

    public struct Aspect: Codable, Sendable {
        public var first: Body
        public var second: Body
        public var type: AspectType
        /// The separation of the two bodies, degrees in [0, 180].
        public var angle: Double
        /// How far from exact, degrees.
        public var orb: Double
        /// True while the orb is shrinking (the faster body moves towards exactness).
        public var applying: Bool
    }

    public var planets: [Planet]
    public var houses: HouseSet
    public var aspects: [Aspect]

    public static func compute(positions: [BodyPosition], houses: Houses, timeKnown: Bool, orbs: [AspectType: Double]) -> NatalChart {
        let planets = positions.map { p in
            let (sign, degree) = ZodiacSign.of(longitude: p.longitude)
            return Planet(body: p.body, longitude: p.longitude, latitude: p.latitude, speed: p.longitudeSpeed, sign: sign,
                          degreeInSign: degree, retrograde: p.longitudeSpeed < 0, house: house(of: p.longitude, cusps: houses.cusps))
        }
        var aspects: [Aspect] = []
        for i in positions.indices {
            for j in positions.indices where j > i {
                let (a, b) = (positions[i], positions[j])
                let separation = Angle.separation(a.longitude, b.longitude)
                for type in AspectType.allCases {
                    let orb = abs(separation - type.angle)
                    guard orb <= orbs[type, default: type.defaultOrb] else { continue }
                    // One hour on: is the orb smaller? (Linear motion over an hour is exact enough for the sign.)
                    let step = 1.0 / 24
                    let later = abs(Angle.separation(a.longitude + a.longitudeSpeed * step, b.longitude + b.longitudeSpeed * step) - type.angle)
                    aspects.append(Aspect(first: a.body, second: b.body, type: type, angle: separation, orb: orb, applying: later < orb))
                }
            }
        }
        let set = HouseSet(system: houses.system, cusps: houses.cusps, ascendant: houses.ascendant, midheaven: houses.midheaven,
                           ascendantSign: ZodiacSign.of(longitude: houses.ascendant).0, midheavenSign: ZodiacSign.of(longitude: houses.midheaven).0,
                           reliable: timeKnown)
        return NatalChart(planets: planets, houses: set, aspects: aspects)
    }

    /// The house whose cusp is at or before `longitude` and whose next cusp is after it, going round the zodiac.
    static func house(of longitude: Double, cusps: [Double]) -> Int {
        let lon = Angle.normalize(longitude)
        for i in 0..<12 {
            let start = Angle.normalize(cusps[i]), end = Angle.normalize(cusps[(i + 1) % 12])
            let span = Angle.normalize(end - start)
            if Angle.normalize(lon - start) < span { return i + 1 }
        }
        return 1
    }
}
