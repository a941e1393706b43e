import Ephemeris
import Foundation
import LanternContracts
import LanternCore

/// A Four Pillars (Ba Zi) reading of a birth: pillars, day master, element counts, zodiac animals, the lunar date.
///
/// The answer carries descriptors only (pillars, elements, animals) besides what the client sent, so the content
/// service can build an LLM prompt from it without raw birth data.
struct BaziReadings: Sendable {
    let ephemeris: SwissEphemeris
    let calendars: LunisolarCalendars

    /// Which clock the hour pillar reads.
    enum SolarTime: String, Sendable {
        /// The birthplace's civil clock.
        case clock
        /// Apparent solar time at the birthplace's longitude.
        case trueSolar = "true"
    }

    func read(_ input: BirthInput, dayBoundary boundary: FourPillars.DayBoundary, solarTime: SolarTime) async throws -> BaziAnswer {
        let moment = input.moment
        let resolved = try moment.resolve(fold: input.fold)
        let longitude = input.place.longitude
        let instant = resolved.utc.julianDayUT
        // Year and month need only the Sun's 15° band at the instant: from the cached solar terms of the year.
        let sun = try await calendars.solarLongitudeBand(at: instant, year: moment.year) + 7.5
        let equation = solarTime == .trueSolar ? try await ephemeris.compute { try $0.equationOfTime(julianDayUT: instant) } : 0
        // The date and hour the pillars read: the birthplace's clock, or its apparent solar time.
        var localDate = CivilDate(year: moment.year, month: moment.month, day: moment.day)
        var hour = moment.hour
        if solarTime == .trueSolar {
            let solar = instant + longitude / 360 + equation
            localDate = CivilDate(julianDayUT: solar, offsetHours: 0)
            hour = Int(((solar + 0.5) - (solar + 0.5).rounded(.down)) * 24)
        }
        let pillars = FourPillars.compute(sunLongitude: sun, gregorianYear: localDate.year, localDate: localDate, hour: hour, dayBoundary: boundary)
        var list = [Self.pillar(pillars.year, role: "year", meaning: "Destiny"), Self.pillar(pillars.month, role: "month", meaning: "Environment"),
                    Self.pillar(pillars.day, role: "day", meaning: "Essence")]
        if moment.timeKnown { list.append(Self.pillar(pillars.hour, role: "hour", meaning: "Inner Heart")) }
        var elements = Dictionary(uniqueKeysWithValues: Element.allCases.map { ($0.rawValue, 0) })
        for p in list {
            elements[p.stemElement, default: 0] += 1
            elements[p.branchElement, default: 0] += 1
        }
        let lunar = try await calendars.lunarDate(of: CivilDate(year: moment.year, month: moment.month, day: moment.day), .chinese)
        var warnings: [ChartWarning] = []
        if !moment.timeKnown {
            warnings.append(.init(code: "time_unknown", message: "No birth time: there is no hour pillar, and the day pillar assumes the birth was not between 23:00 and midnight."))
        }
        if let fold = resolved.ambiguity {
            let (code, message) = moment.ambiguityWarning(fold)
            warnings.append(.init(code: code, message: message))
        }
        // The lunar year's stem and branch: 1984 (a Jia-Zi year) is the start of a sixty-year cycle.
        let lunarStem = Stem(rawValue: ((lunar.year - 4) % 10 + 10) % 10)!, lunarBranch = Branch(rawValue: ((lunar.year - 4) % 12 + 12) % 12)!
        return BaziAnswer(
            pillars: list,
            dayMaster: .init(stem: pillars.day.stem.name, element: pillars.day.stem.element.rawValue, polarity: pillars.day.stem.polarity.rawValue),
            elements: elements, zodiacAnimal: lunarBranch.animal, solarYearAnimal: pillars.year.branch.animal,
            lunarYear: .init(year: lunar.year, stem: lunarStem.name, stemHanzi: lunarStem.hanzi, branch: lunarBranch.name, branchHanzi: lunarBranch.hanzi,
                             element: lunarStem.element.rawValue, polarity: lunarStem.polarity.rawValue, animal: lunarBranch.animal),
            lunarDate: lunar,
            options: .init(dayBoundary: boundary.rawValue, solarTime: solarTime.rawValue), timeKnown: moment.timeKnown,
            warnings: warnings.map { .init(code: $0.code, message: $0.message) })
    }

    static func pillar(_ pillar: Pillar, role: String, meaning: String) -> BaziAnswer.Pillar {
        BaziAnswer.Pillar(role: role, meaning: meaning, stem: pillar.stem.name, stemHanzi: pillar.stem.hanzi, branch: pillar.branch.name,
                          branchHanzi: pillar.branch.hanzi, animal: pillar.branch.animal, stemElement: pillar.stem.element.rawValue,
                          branchElement: pillar.branch.element.rawValue, polarity: pillar.stem.polarity.rawValue)
    }
}
