import Foundation
import LanternContracts

/// The Four Pillars as astrology reads them (`AstrologyEndpoint.bazi`), the part Lucky Day uses.
struct BaziReading: Sendable {
    typealias Pillar = LuckyPillar
    typealias DayMaster = BaziAnswer.DayMaster
    var pillars: [Pillar]
    var dayMaster: DayMaster
    var elements: [String: Int]
    /// The animal of the lunar year: the user's Chinese zodiac sign.
    var zodiacAnimal: String
    /// The element of the lunar year's stem: the "Metal" of "Metal Horse" (Req 3.2: the sign follows the lunar
    /// calendar, animal and element alike; the year pillar counts from Li Chun and may name another year).
    var yearElement: String

    init(pillars: [Pillar], dayMaster: DayMaster, elements: [String: Int], zodiacAnimal: String, yearElement: String) {
        self.pillars = pillars
        self.dayMaster = dayMaster
        self.elements = elements
        self.zodiacAnimal = zodiacAnimal
        self.yearElement = yearElement
    }

    init(_ answer: BaziAnswer) {
        self.init(pillars: answer.pillars.map(LuckyPillar.init), dayMaster: answer.dayMaster, elements: answer.elements,
                  zodiacAnimal: answer.lunarYear.animal, yearElement: answer.lunarYear.element)
    }


    /// astrology names animals, elements and polarities in lower case (`horse`, `metal`, `yang`); Lucky Day shows
    /// and writes them as English names (`Horse`, `Metal`, `Yang`).
    func displayNames() -> BaziReading {
        func name(_ text: String) -> String { text.prefix(1).uppercased() + text.dropFirst() }
        var reading = self
        reading.pillars = pillars.map { pillar in
            var pillar = pillar
            pillar.animal = name(pillar.animal)
            pillar.stemElement = name(pillar.stemElement)
            pillar.branchElement = name(pillar.branchElement)
            pillar.polarity = name(pillar.polarity)
            return pillar
        }
        reading.dayMaster = DayMaster(stem: dayMaster.stem, element: name(dayMaster.element), polarity: name(dayMaster.polarity))
        reading.elements = Dictionary(elements.map { (name($0.key), $0.value) }, uniquingKeysWith: +)
        reading.zodiacAnimal = name(zodiacAnimal)
        reading.yearElement = name(yearElement)
        return reading
    }
}

/// One of the Four Pillars: astrology's reading of it, and what Lucky Day adds (whether it was assumed, its poem).
struct LuckyPillar: Sendable, Codable, Equatable {
    var role: String
    var meaning: String
    var stem: String
    var stemHanzi: String
    var branch: String
    var branchHanzi: String
    var animal: String
    var stemElement: String
    var branchElement: String
    var polarity: String
    /// Drawn for noon because the birth time is unknown.
    var assumed: Bool = false
    var poem: String = ""

    init(_ pillar: BaziAnswer.Pillar) {
        role = pillar.role
        meaning = pillar.meaning
        stem = pillar.stem
        stemHanzi = pillar.stemHanzi
        branch = pillar.branch
        branchHanzi = pillar.branchHanzi
        animal = pillar.animal
        stemElement = pillar.stemElement
        branchElement = pillar.branchElement
        polarity = pillar.polarity
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        role = try c.decode(String.self, forKey: .role)
        meaning = try c.decode(String.self, forKey: .meaning)
        stem = try c.decode(String.self, forKey: .stem)
        stemHanzi = try c.decode(String.self, forKey: .stemHanzi)
        branch = try c.decode(String.self, forKey: .branch)
        branchHanzi = try c.decode(String.self, forKey: .branchHanzi)
        animal = try c.decode(String.self, forKey: .animal)
        stemElement = try c.decode(String.self, forKey: .stemElement)
        branchElement = try c.decode(String.self, forKey: .branchElement)
        polarity = try c.decode(String.self, forKey: .polarity)
        // astrology's answer has neither; a stored profile has both.
        assumed = try c.decodeIfPresent(Bool.self, forKey: .assumed) ?? false
        poem = try c.decodeIfPresent(String.self, forKey: .poem) ?? ""
    }
}

/// A Lucky Day profile: what the app shows (Req 3, 4) and what fortunes are written from.
struct LuckyProfile: Sendable, Equatable {
    typealias Pillar = LuckyPillar

    var userID: UUID
    var version: Int
    var timeZone: String
    var birthTimeKnown: Bool
    var zodiacAnimal: String
    var yearElement: String
    /// "Yang Metal": polarity and element of the day stem.
    var dayMaster: String
    var pillars: [Pillar]
    var elements: [String: Int]
    var nickname: String
    var essence: [String]
    /// No model wrote the texts (nickname, poems, essence).
    var textsArtisanal: Bool
    var limitations: [String]
    var createdAt: Date
    var updatedAt: Date

    static let unknownTimeLimitation = "Birth time unknown: the Hour pillar (Inner Heart) is drawn for noon and may not be yours."

    /// Whether the profile was made from this reading in this zone: the same birth data sent again, which changes
    /// nothing (no model call, no new made-ahead fortune; issue #23: each save used to cost a model call).
    func isMade(from reading: BaziReading, birthTimeKnown known: Bool, timeZone zone: String) -> Bool {
        func signs(_ pillars: [Pillar]) -> [Pillar] { pillars.map { var pillar = $0; pillar.poem = ""; pillar.assumed = false; return pillar } }
        return timeZone == zone && birthTimeKnown == known && zodiacAnimal == reading.zodiacAnimal && yearElement == reading.yearElement
            && dayMaster == "\(reading.dayMaster.polarity) \(reading.dayMaster.element)" && elements == reading.elements
            && signs(pillars) == signs(reading.pillars)
    }

    /// The five elements in the order of their generating cycle.
    static let order = ["Wood", "Fire", "Earth", "Metal", "Water"]

    /// The element with the most marks in a balance; a tie goes to the first in the cycle.
    static func dominantElement(in elements: [String: Int]) -> String {
        order.reduce(order[0]) { (elements[$1] ?? 0) > (elements[$0] ?? 0) ? $1 : $0 }
    }

    /// The element with the fewest marks; a tie goes to the first in the cycle.
    static func weakElement(in elements: [String: Int]) -> String {
        order.reduce(order[0]) { (elements[$1] ?? 0) < (elements[$0] ?? 0) ? $1 : $0 }
    }
}
