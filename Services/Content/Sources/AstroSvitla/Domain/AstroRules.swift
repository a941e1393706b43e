import Foundation
import LanternContracts

/// The expert rules (FR-029): each names one placement — a planet or chart point in a sign, a planet in a house,
/// or an aspect family between two planets — and says what it means for each life area it speaks to, in English
/// and Ukrainian. Written for Lantern; the files are `Catalogue/astrosvitla/rules/*.json`.
struct AstroRule: Decodable, Sendable {
    enum Placement: Hashable, Sendable {
        case sign(point: String, sign: String)
        case house(planet: String, house: Int)
        /// `family`: `conjunction`, `harmonious` (trine, sextile) or `tense` (square, opposition).
        case aspect(first: String, second: String, family: String)
    }

    var id: String
    var placement: Placement
    /// 1–5: how strongly the placement colours a life.
    var weight: Int
    var headline: Localized
    var areas: [LifeArea: Localized]

    private enum CodingKeys: String, CodingKey { case id, planet, sign, house, planets, aspects, weight, headline, areas }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        weight = try c.decode(Int.self, forKey: .weight)
        headline = try c.decode(Localized.self, forKey: .headline)
        let raw = try c.decode([String: Localized].self, forKey: .areas)
        var areas: [LifeArea: Localized] = [:]
        for (key, text) in raw {
            guard let area = LifeArea(rawValue: key) else { throw CatalogueError("rule \(id): unknown area '\(key)'") }
            areas[area] = text
        }
        self.areas = areas
        if let planets = try c.decodeIfPresent([String].self, forKey: .planets) {
            let aspects = try c.decode([String].self, forKey: .aspects)
            guard planets.count == 2, let family = AspectFamily.of(aspects) else { throw CatalogueError("rule \(id): bad aspect selector") }
            placement = .aspect(first: planets[0], second: planets[1], family: family.rawValue)
        } else if let house = try c.decodeIfPresent(Int.self, forKey: .house) {
            placement = .house(planet: try c.decode(String.self, forKey: .planet), house: house)
        } else {
            placement = .sign(point: try c.decode(String.self, forKey: .planet), sign: try c.decode(String.self, forKey: .sign))
        }
    }
}

enum AspectFamily: String, CaseIterable, Sendable {
    case conjunction, harmonious, tense

    static func of(_ types: [String]) -> AspectFamily? {
        switch Set(types) {
        case ["conjunction"]: .conjunction
        case ["trine", "sextile"]: .harmonious
        case ["square", "opposition"]: .tense
        default: nil
        }
    }

    init?(aspectType: String) {
        switch aspectType {
        case "conjunction": self = .conjunction
        case "trine", "sextile": self = .harmonious
        case "square", "opposition": self = .tense
        default: return nil
        }
    }
}

/// Names of the chart's parts, in the order the rules use.
enum ChartNames {
    static let planets = ["sun", "moon", "mercury", "venus", "mars", "jupiter", "saturn", "uranus", "neptune", "pluto"]
    static let points = planets + ["ascendant", "midheaven"]
    static let signs = ["aries", "taurus", "gemini", "cancer", "leo", "virgo", "libra", "scorpio", "sagittarius", "capricorn",
                        "aquarius", "pisces"]
    /// Widest default orb per aspect type (astrology's defaults), for how tight an aspect is.
    static let defaultOrbs = ["conjunction": 8.0, "opposition": 8, "square": 7, "trine": 7, "sextile": 5]

    static func display(_ name: String, _ language: ReportLanguage) -> String {
        language == .uk ? (ukrainian[name] ?? name) : name.prefix(1).uppercased() + name.dropFirst()
    }

    static let ukrainian = [
        "sun": "Сонце", "moon": "Місяць", "mercury": "Меркурій", "venus": "Венера", "mars": "Марс", "jupiter": "Юпітер",
        "saturn": "Сатурн", "uranus": "Уран", "neptune": "Нептун", "pluto": "Плутон", "ascendant": "Асцендент",
        "midheaven": "Середина неба", "aries": "Овен", "taurus": "Телець", "gemini": "Близнюки", "cancer": "Рак", "leo": "Лев",
        "virgo": "Діва", "libra": "Терези", "scorpio": "Скорпіон", "sagittarius": "Стрілець", "capricorn": "Козеріг",
        "aquarius": "Водолій", "pisces": "Риби", "conjunction": "з'єднання", "opposition": "опозиція", "square": "квадратура",
        "trine": "тригон", "sextile": "секстиль",
    ]
}

/// Every rule, indexed by placement; loading refuses duplicates and unknown names, so a typo in a file is a start
/// error rather than a rule that silently never matches.
struct RuleBook: Sendable {
    let rules: [AstroRule.Placement: AstroRule]
    let byId: [String: AstroRule]

    init(_ rules: [AstroRule]) throws {
        var index: [AstroRule.Placement: AstroRule] = [:]
        for rule in rules {
            switch rule.placement {
            case .sign(let point, let sign):
                guard ChartNames.points.contains(point), ChartNames.signs.contains(sign) else { throw CatalogueError("rule \(rule.id): unknown point or sign") }
            case .house(let planet, let house):
                guard ChartNames.planets.contains(planet), (1...12).contains(house) else { throw CatalogueError("rule \(rule.id): unknown planet or house") }
            case .aspect(let first, let second, _):
                guard let a = ChartNames.planets.firstIndex(of: first), let b = ChartNames.planets.firstIndex(of: second), a < b else {
                    throw CatalogueError("rule \(rule.id): planets must be two, in canonical order")
                }
            }
            guard (1...5).contains(rule.weight), !rule.areas.isEmpty else { throw CatalogueError("rule \(rule.id): weight 1–5 and at least one area") }
            guard index.updateValue(rule, forKey: rule.placement) == nil else { throw CatalogueError("rule \(rule.id): a second rule for the same placement") }
        }
        self.rules = index
        byId = Dictionary(rules.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        guard byId.count == rules.count else { throw CatalogueError("two rules share an id") }
    }

    /// Placements no rule covers (a complete book has none; a test keeps it so).
    var missing: [AstroRule.Placement] {
        var all: [AstroRule.Placement] = []
        for point in ChartNames.points { for sign in ChartNames.signs { all.append(.sign(point: point, sign: sign)) } }
        for planet in ChartNames.planets { for house in 1...12 { all.append(.house(planet: planet, house: house)) } }
        for (i, first) in ChartNames.planets.enumerated() {
            for second in ChartNames.planets[(i + 1)...] {
                for family in AspectFamily.allCases { all.append(.aspect(first: first, second: second, family: family.rawValue)) }
            }
        }
        return all.filter { rules[$0] == nil }
    }
}

/// A rule that a chart matches, with how much it matters there.
struct MatchedRule: Sendable {
    var rule: AstroRule
    var score: Double
    /// The chart's part the rule is about first (the planet or point), for choosing tips.
    var point: String
    /// Tightness in 0...1 for aspects (1 = exact), 1 otherwise.
    var tightness: Double

    /// "Venus in Taurus", "Venus in the 7th house", "Sun trine Moon (close)": how a prompt names the placement.
    func label(_ language: ReportLanguage, aspectType: String? = nil) -> String {
        let d = { ChartNames.display($0, language) }
        switch rule.placement {
        case .sign(let point, let sign):
            return language == .uk ? "\(d(point)) — \(d(sign))" : "\(d(point)) in \(d(sign))"
        case .house(let planet, let house):
            return language == .uk ? "\(d(planet)) у \(house)-му домі" : "\(d(planet)) in the \(Self.ordinal(house)) house"
        case .aspect(let first, let second, let family):
            let kind = aspectType.map { d($0) } ?? family
            return language == .uk ? "\(d(first)) — \(d(second)): \(kind)" : "\(d(first)) \(kind) \(d(second))"
        }
    }

    static func ordinal(_ n: Int) -> String {
        let suffix = (11...13).contains(n % 100) ? "th" : [1: "st", 2: "nd", 3: "rd"][n % 10] ?? "th"
        return "\(n)\(suffix)"
    }
}

/// Chooses and ranks the rules a chart matches for a life area (FR-029, FR-032): the chart's own placements select
/// them, the weight of the rule, the importance of the planet and, for aspects, the tightness of the orb rank them.
/// With the birth time unknown, houses, the Ascendant and the MC are left out (product decision).
struct RuleMatcher: Sendable {
    let book: RuleBook

    /// Personal points weigh more than the slow planets a whole generation shares.
    static let pointFactor: [String: Double] = [
        "sun": 1.5, "moon": 1.5, "ascendant": 1.5, "mercury": 1.2, "venus": 1.2, "mars": 1.2, "midheaven": 1.1,
        "jupiter": 1.0, "saturn": 1.0, "uranus": 0.8, "neptune": 0.8, "pluto": 0.8,
    ]

    /// Every rule the chart matches (any area), strongest first; each aspect once, at its tightest.
    func matches(_ chart: NatalChartSummary) -> [MatchedRule] {
        var found: [MatchedRule] = []
        let timeKnown = chart.houses.reliable
        for planet in chart.planets {
            if let rule = book.rules[.sign(point: planet.body, sign: planet.sign)] {
                found.append(MatchedRule(rule: rule, score: score(rule, point: planet.body), point: planet.body, tightness: 1))
            }
            if timeKnown, let rule = book.rules[.house(planet: planet.body, house: planet.house)] {
                found.append(MatchedRule(rule: rule, score: score(rule, point: planet.body) * 0.9, point: planet.body, tightness: 1))
            }
        }
        if timeKnown {
            for (point, sign) in [("ascendant", chart.houses.ascendantSign), ("midheaven", chart.houses.midheavenSign)] {
                if let rule = book.rules[.sign(point: point, sign: sign)] {
                    found.append(MatchedRule(rule: rule, score: score(rule, point: point), point: point, tightness: 1))
                }
            }
        }
        var seen = Set<AstroRule.Placement>()
        for aspect in chart.aspects.sorted(by: { $0.orb < $1.orb }) {
            guard let family = AspectFamily(aspectType: aspect.type),
                  let i = ChartNames.planets.firstIndex(of: aspect.first), let j = ChartNames.planets.firstIndex(of: aspect.second) else { continue }
            let (a, b) = i < j ? (aspect.first, aspect.second) : (aspect.second, aspect.first)
            let placement = AstroRule.Placement.aspect(first: a, second: b, family: family.rawValue)
            guard let rule = book.rules[placement], seen.insert(placement).inserted else { continue }
            let tightness = max(0, 1 - aspect.orb / (ChartNames.defaultOrbs[aspect.type] ?? 8))
            let factor = max(Self.pointFactor[a] ?? 1, Self.pointFactor[b] ?? 1)
            found.append(MatchedRule(rule: rule, score: Double(rule.weight) * factor * (0.5 + 0.5 * tightness), point: a, tightness: tightness))
        }
        return found.sorted { $0.score != $1.score ? $0.score > $1.score : $0.rule.id < $1.rule.id }
    }

    /// The rules that speak to `area`, strongest first.
    func matches(_ chart: NatalChartSummary, area: LifeArea) -> [MatchedRule] {
        matches(chart).filter { $0.rule.areas[area] != nil }
    }

    private func score(_ rule: AstroRule, point: String) -> Double {
        Double(rule.weight) * (Self.pointFactor[point] ?? 1)
    }
}
