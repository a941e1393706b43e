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

    /// Something the caller should tell the person (`time_unknown`, an ambiguous or skipped local time…).
    public struct Warning: Codable, Sendable, Equatable {
        public var code: String
        public var message: String
        public init(code: String, message: String) {
            self.code = code
            self.message = message
        }
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
    /// `POST`, the same body: the chart drawn as SVG (`?theme=light`; `&fingerprint=` to draw it only if the birth
    /// data's chart has that fingerprint, else 409 `fingerprint_mismatch`, checked before any casting).
    public static let natalChartSVGPath = "/internal/astrology/charts/natal.svg"
    /// The problem code of a chart whose fingerprint is not the one asked for.
    public static let fingerprintMismatch = "fingerprint_mismatch"

    /// Natal chart of birth data; what a caller reads of it.
    public static let natalChart = InternalRoute<BirthData, NatalChartSummary>(service: "astrology", path: natalChartPath, callers: ["content"])
    /// The chart drawn as SVG (`theme`: `light`, for paper, or `dark`).
    public static let natalChartSVG = InternalRoute<BirthData, String>.text(service: "astrology", path: natalChartSVGPath, callers: ["content"])
    /// The Four Pillars of a birth.
    public static let bazi = InternalRoute<BaziRequest, BaziAnswer>(service: "astrology", path: "/internal/astrology/bazi", callers: ["content"])

    /// Every service that may call one of astrology's internal routes.
    public static let callers = natalChart.callers.union(natalChartSVG.callers).union(bazi.callers).union(festivals.callers)
}

/// Birth data as an app sends it and a service passes it on to astrology, which checks every field (a refusal names
/// them: `date`, `time`, `place.id`…). Services keep none of it.
public struct BirthData: Codable, Sendable, Equatable {
    public struct Place: Codable, Sendable, Equatable {
        /// A GeoNames id from astrology's place search; or coordinates with a time zone.
        public var id: Int?
        public var latitude: Double?
        public var longitude: Double?
        public var timeZone: String?
        public init(id: Int? = nil, latitude: Double? = nil, longitude: Double? = nil, timeZone: String? = nil) {
            self.id = id
            self.latitude = latitude
            self.longitude = longitude
            self.timeZone = timeZone
        }
    }
    /// `YYYY-MM-DD`.
    public var date: String
    /// `HH:MM`, or nil when unknown.
    public var time: String?
    public var place: Place
    public init(date: String, time: String?, place: Place) {
        self.date = date
        self.time = time
        self.place = place
    }
}

/// `POST /internal/astrology/bazi` (and `/v1/astrology/bazi`): birth data with the reading's conventions.
public struct BaziRequest: Codable, Sendable, Equatable {
    public var date: String
    /// `HH:MM`; nil reads no hour pillar (Lucky Day sends noon instead and marks that pillar assumed).
    public var time: String?
    public var place: BirthData.Place
    /// `23:00` (the Zi hour starts the day) or `00:00`.
    public var dayBoundary: String?
    /// `clock` (the birthplace's civil time) or `true` (apparent solar time).
    public var solarTime: String?
    public init(date: String, time: String?, place: BirthData.Place, dayBoundary: String? = nil, solarTime: String? = nil) {
        self.date = date
        self.time = time
        self.place = place
        self.dayBoundary = dayBoundary
        self.solarTime = solarTime
    }
}

/// astrology's Four Pillars (Ba Zi) reading: pillars, day master, element counts, zodiac animals, the lunar date.
/// Names are lower case (`metal`, `horse`, `yang`), stems and branches in pinyin with their hanzi. Descriptors only
/// besides what the caller sent, so a prompt can be built from it without the birth data.
public struct BaziAnswer: Codable, Sendable, Equatable {
    public struct Pillar: Codable, Sendable, Equatable {
        /// `year`, `month`, `day`, `hour`.
        public var role: String
        /// `Destiny`, `Environment`, `Essence`, `Inner Heart`.
        public var meaning: String
        public var stem: String
        public var stemHanzi: String
        public var branch: String
        public var branchHanzi: String
        public var animal: String
        public var stemElement: String
        public var branchElement: String
        /// The stem's.
        public var polarity: String
        public init(role: String, meaning: String, stem: String, stemHanzi: String, branch: String, branchHanzi: String, animal: String,
                    stemElement: String, branchElement: String, polarity: String) {
            self.role = role
            self.meaning = meaning
            self.stem = stem
            self.stemHanzi = stemHanzi
            self.branch = branch
            self.branchHanzi = branchHanzi
            self.animal = animal
            self.stemElement = stemElement
            self.branchElement = branchElement
            self.polarity = polarity
        }
    }

    public struct DayMaster: Codable, Sendable, Equatable {
        public var stem: String
        public var element: String
        public var polarity: String
        public init(stem: String, element: String, polarity: String) {
            self.stem = stem
            self.element = element
            self.polarity = polarity
        }
    }

    /// The date in the Chinese lunisolar calendar.
    public struct LunarDate: Codable, Sendable, Equatable {
        public var year: Int
        public var month: Int
        public var leap: Bool
        public var day: Int
        public var monthLength: Int
        public init(year: Int, month: Int, leap: Bool, day: Int, monthLength: Int) {
            self.year = year
            self.month = month
            self.leap = leap
            self.day = day
            self.monthLength = monthLength
        }
    }

    /// The lunar year of the date (it begins at the lunar new year): its stem and branch are the person's Chinese
    /// zodiac sign, element and animal (Metal Horse for 1990-01-30). The year pillar, by Ba Zi's convention, counts
    /// from Li Chun instead, so in the days between the two it names another year (Earth Snake there).
    public struct LunarYear: Codable, Sendable, Equatable {
        /// The Gregorian year in which it began.
        public var year: Int
        public var stem: String
        public var stemHanzi: String
        public var branch: String
        public var branchHanzi: String
        /// The stem's: the sign's element (`metal`).
        public var element: String
        public var polarity: String
        /// The branch's: the sign's animal (`horse`), the same as `zodiacAnimal`.
        public var animal: String
        public init(year: Int, stem: String, stemHanzi: String, branch: String, branchHanzi: String, element: String, polarity: String,
                    animal: String) {
            self.year = year
            self.stem = stem
            self.stemHanzi = stemHanzi
            self.branch = branch
            self.branchHanzi = branchHanzi
            self.element = element
            self.polarity = polarity
            self.animal = animal
        }
    }

    public struct Options: Codable, Sendable, Equatable {
        public var dayBoundary: String
        public var solarTime: String
        public init(dayBoundary: String, solarTime: String) {
            self.dayBoundary = dayBoundary
            self.solarTime = solarTime
        }
    }

    public var pillars: [Pillar]
    public var dayMaster: DayMaster
    /// Marks per element (`wood` … `water`), two per pillar.
    public var elements: [String: Int]
    /// The animal of the lunar year (changes at the lunar new year): the person's Chinese zodiac sign.
    public var zodiacAnimal: String
    /// The animal of the year pillar (changes at Li Chun, about 4 February).
    public var solarYearAnimal: String
    /// The lunar year, whose stem and branch make the zodiac sign.
    public var lunarYear: LunarYear
    public var lunarDate: LunarDate
    public var options: Options
    public var timeKnown: Bool
    public var warnings: [NatalChartSummary.Warning]

    public init(pillars: [Pillar], dayMaster: DayMaster, elements: [String: Int], zodiacAnimal: String, solarYearAnimal: String,
                lunarYear: LunarYear, lunarDate: LunarDate, options: Options, timeKnown: Bool, warnings: [NatalChartSummary.Warning]) {
        self.pillars = pillars
        self.dayMaster = dayMaster
        self.elements = elements
        self.zodiacAnimal = zodiacAnimal
        self.solarYearAnimal = solarYearAnimal
        self.lunarYear = lunarYear
        self.lunarDate = lunarDate
        self.options = options
        self.timeKnown = timeKnown
        self.warnings = warnings
    }
}
