import Ephemeris
import Foundation
import LanternContracts

/// The festivals of a year in the Chinese or Vietnamese calendar: lunar dates (New Year, Mid-Autumn, …) and the
/// solar terms that are festivals (Qingming, the winter solstice).
struct Festivals: Sendable {
    let ephemeris: SwissEphemeris
    let calendars: LunisolarCalendars

    func of(_ year: Int, _ calendar: LunisolarCalendar) async throws -> FestivalCalendar {
        var list: [FestivalCalendar.Festival] = []
        for f in Self.lunarFestivals[calendar] ?? [] {
            let date: CivilDate?
            if f.month == 12 && f.day == 0 {  // the last day of the 12th month: New Year's Eve
                date = try await calendars.newYear(year + 1, calendar).adding(days: -1)
            } else {
                date = try await calendars.gregorian(year: year, month: f.month, leap: false, day: f.day, calendar)
            }
            if let date { list.append(FestivalCalendar.Festival(key: f.key, name: f.name, date: date.description, kind: "lunar")) }
        }
        let offset = calendar.offsetHours(year: year)
        for term in Self.solarFestivals[calendar] ?? [] {
            let jd = try await ephemeris.compute { session in
                try session.sunCrossing(term.longitude, after: session.julianDay(year: year, month: 1, day: 1, hour: -offset))
            }
            list.append(FestivalCalendar.Festival(key: term.key, name: term.name, date: CivilDate(julianDayUT: jd, offsetHours: offset).description, kind: "solar"))
        }
        list.sort { $0.date < $1.date }
        return FestivalCalendar(calendar: calendar.rawValue, year: year, festivals: list)
    }

    static let lunarFestivals: [LunisolarCalendar: [(key: String, name: String, month: Int, day: Int)]] = [
        .chinese: [("spring_festival", "Spring Festival (Chinese New Year)", 1, 1), ("lantern", "Lantern Festival", 1, 15),
                   ("dragon_boat", "Dragon Boat Festival", 5, 5), ("qixi", "Qixi Festival", 7, 7), ("ghost", "Ghost Festival", 7, 15),
                   ("mid_autumn", "Mid-Autumn Festival", 8, 15), ("double_ninth", "Double Ninth Festival", 9, 9),
                   ("laba", "Laba Festival", 12, 8), ("new_years_eve", "New Year's Eve", 12, 0)],
        .vietnamese: [("tet", "Tết Nguyên Đán", 1, 1), ("tet_2", "Tết Nguyên Đán (day 2)", 1, 2), ("tet_3", "Tết Nguyên Đán (day 3)", 1, 3),
                      ("nguyen_tieu", "Tết Nguyên Tiêu", 1, 15), ("hung_kings", "Giỗ Tổ Hùng Vương", 3, 10), ("doan_ngo", "Tết Đoan Ngọ", 5, 5),
                      ("vu_lan", "Vu Lan", 7, 15), ("trung_thu", "Tết Trung Thu", 8, 15), ("ong_tao", "Ông Công Ông Táo", 12, 23),
                      ("tat_nien", "Tất Niên (New Year's Eve)", 12, 0)],
    ]

    static let solarFestivals: [LunisolarCalendar: [(key: String, name: String, longitude: Double)]] = [
        .chinese: [("qingming", "Qingming Festival", 15), ("dongzhi", "Winter Solstice Festival (Dongzhi)", 270)],
        .vietnamese: [("thanh_minh", "Tết Thanh Minh", 15), ("dong_chi", "Đông Chí", 270)],
    ]
}
