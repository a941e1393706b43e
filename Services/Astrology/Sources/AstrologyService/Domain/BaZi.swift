import Foundation

public enum Element: String, Codable, Sendable, CaseIterable {
    case wood, fire, earth, metal, water
}

public enum Polarity: String, Codable, Sendable {
    case yang, yin
}

/// The ten Heavenly Stems.
public enum Stem: Int, Codable, Sendable, CaseIterable {
    case jia, yi, bing, ding, wu, ji, geng, xin, ren, gui

    public var name: String { ["Jia", "Yi", "Bing", "Ding", "Wu", "Ji", "Geng", "Xin", "Ren", "Gui"][rawValue] }
    public var hanzi: String { ["甲", "乙", "丙", "丁", "戊", "己", "庚", "辛", "壬", "癸"][rawValue] }
    public var element: Element { Element.allCases[rawValue / 2] }
    public var polarity: Polarity { rawValue % 2 == 0 ? .yang : .yin }
}

/// The twelve Earthly Branches and their animals.
public enum Branch: Int, Codable, Sendable, CaseIterable {
    case zi, chou, yin, mao, chen, si, wu, wei, shen, you, xu, hai

    public var name: String { ["Zi", "Chou", "Yin", "Mao", "Chen", "Si", "Wu", "Wei", "Shen", "You", "Xu", "Hai"][rawValue] }
    public var hanzi: String { ["子", "丑", "寅", "卯", "辰", "巳", "午", "未", "申", "酉", "戌", "亥"][rawValue] }
    public var animal: String { ["rat", "ox", "tiger", "rabbit", "dragon", "snake", "horse", "goat", "monkey", "rooster", "dog", "pig"][rawValue] }
    public var element: Element {
        [.water, .earth, .wood, .wood, .earth, .fire, .fire, .earth, .metal, .metal, .earth, .water][rawValue]
    }
    public var polarity: Polarity { rawValue % 2 == 0 ? .yang : .yin }
}

/// One of the sixty stem–branch pairs (a sexagenary index 0 = Jia-Zi … 59 = Gui-Hai).
public struct Pillar: Sendable, Equatable {
    public var stem: Stem
    public var branch: Branch

    public init(index: Int) {
        let i = ((index % 60) + 60) % 60
        stem = Stem(rawValue: i % 10)!
        branch = Branch(rawValue: i % 12)!
    }

    public init(stem: Stem, branch: Branch) {
        self.stem = stem
        self.branch = branch
    }

    public var name: String { "\(stem.name)-\(branch.name)" }
}

/// The Four Pillars of a birth moment, from the Sun's apparent longitude (year and month change at the 'jie'
/// solar terms, Li Chun first), the sexagenary day count and the two-hour branch of the clock time.
public enum FourPillars {
    /// When the day pillar changes: at 23:00 (the Zi hour opens the new day; the default) or at midnight.
    public enum DayBoundary: String, Codable, Sendable { case zi2300 = "23:00", midnight = "00:00" }

    /// - Parameters:
    ///   - sunLongitude: apparent solar longitude at the birth instant, degrees.
    ///   - gregorianYear: the civil year of the birth (at the birthplace).
    ///   - localDate: the civil date at the birthplace, and `hour` its hour (clock or true solar time).
    public static func compute(sunLongitude: Double, gregorianYear: Int, localDate: CivilDate, hour: Int,
                               dayBoundary: DayBoundary) -> (year: Pillar, month: Pillar, day: Pillar, hour: Pillar) {
        // Year: from Li Chun (315°). Early in the calendar year the Sun is still short of it.
        let beforeLiChun = localDate.month <= 2 && sunLongitude >= 270 && sunLongitude < 315
        let solarYear = beforeLiChun ? gregorianYear - 1 : gregorianYear
        let year = Pillar(index: solarYear - 4)  // 4 CE was Jia-Zi
        // Month: each 'jie' (315°, 345°, 15°, …) starts the next branch, Yin (tiger) at Li Chun.
        let sinceLiChun = Int(((sunLongitude - 315).truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(dividingBy: 360) / 30)
        let yinStem = (year.stem.rawValue % 5 * 2 + 2) % 10  // the "five tigers" rule
        let month = Pillar(stem: Stem(rawValue: (yinStem + sinceLiChun) % 10)!, branch: Branch(rawValue: (2 + sinceLiChun) % 12)!)
        // Day: the sexagenary count; JDN + 49 puts Jia-Zi at 0 (1900-01-01 was Jia-Xu, index 10).
        let lateZi = hour == 23 && dayBoundary == .zi2300
        let dayIndex = (localDate.julianDayNumber + (lateZi ? 1 : 0) + 49) % 60
        let day = Pillar(index: dayIndex)
        // Hour: two-hour branches from Zi (23:00–00:59); the stem follows the day stem ("five rats" rule). The late
        // Zi hour (23:00–23:59) opens the next day's twelve hours, so its stem comes from the next day's stem under
        // either boundary (lunar-python's both sects, sxtwl, cnlunar); the boundary only decides the day pillar.
        let branch = ((hour + 1) / 2) % 12
        let hourDay = hour == 23 ? Pillar(index: (localDate.julianDayNumber + 1 + 49) % 60) : day
        let ziStem = hourDay.stem.rawValue % 5 * 2
        let hourPillar = Pillar(stem: Stem(rawValue: (ziStem + branch) % 10)!, branch: Branch(rawValue: branch)!)
        return (year, month, day, hourPillar)
    }
}
