import Foundation

/// The part of astrology's natal chart answer that other services read (content's AstroSvitla reports): signs,
/// houses and aspects by name, and the chart's fingerprint. Decoding ignores the rest (positions, cusps, the
/// birth echo), so astrology may add fields freely; an astrology test decodes its real answer into this type.
public struct NatalChartSummary: Codable, Sendable, Equatable {
    public struct Planet: Codable, Sendable, Equatable {
        /// `sun` … `pluto`.
        public var body: String
        /// `aries` … `pisces`.
        public var sign: String
        /// 1–12.
        public var house: Int
        public var retrograde: Bool
        public init(body: String, sign: String, house: Int, retrograde: Bool) {
            self.body = body
            self.sign = sign
            self.house = house
            self.retrograde = retrograde
        }
    }

    public struct Houses: Codable, Sendable, Equatable {
        public var ascendantSign: String
        public var midheavenSign: String
        /// False when the birth time is unknown: houses, Ascendant and MC are then not to be read.
        public var reliable: Bool
        public init(ascendantSign: String, midheavenSign: String, reliable: Bool) {
            self.ascendantSign = ascendantSign
            self.midheavenSign = midheavenSign
            self.reliable = reliable
        }
    }

    public struct Aspect: Codable, Sendable, Equatable {
        public var first: String
        public var second: String
        /// `conjunction`, `opposition`, `square`, `trine`, `sextile`.
        public var type: String
        /// Degrees from exact.
        public var orb: Double
        public init(first: String, second: String, type: String, orb: Double) {
            self.first = first
            self.second = second
            self.type = type
            self.orb = orb
        }
    }

    public struct Warning: Codable, Sendable, Equatable {
        public var code: String
        public var message: String
    }

    public var planets: [Planet]
    public var houses: Houses
    public var aspects: [Aspect]
    /// Keyed hash of the normalised birth data: the chart's name everywhere outside astrology.
    public var fingerprint: String
    public var warnings: [Warning]

    public init(planets: [Planet], houses: Houses, aspects: [Aspect], fingerprint: String, warnings: [Warning] = []) {
        self.planets = planets
        self.houses = houses
        self.aspects = aspects
        self.fingerprint = fingerprint
        self.warnings = warnings
    }
}

/// astrology's routes for services (service tokens, audience `internal`); the gateway never forwards `/internal`.
public enum AstrologyEndpoint {
    /// `POST`, the app's birth data (`date`, `time`, `place`): `NatalChartSummary` (and more).
    public static let natalChartPath = "/internal/astrology/charts/natal"
    /// `POST`, the same body: the chart drawn as SVG (`?theme=light`).
    public static let natalChartSVGPath = "/internal/astrology/charts/natal.svg"
}
