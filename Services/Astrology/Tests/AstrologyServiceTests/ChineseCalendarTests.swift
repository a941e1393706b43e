@testable import AstrologyService
import Ephemeris
import Foundation
import LanternContracts
import HTTPTypes
import HummingbirdTesting
import LanternCore
import LanternTestSupport
import NIOCore
import Testing

@Suite("lunisolar calendars and Ba Zi")
struct ChineseCalendarTests {
    static let ephemeris = SwissEphemeris()
    static let calendars = LunisolarCalendars(ephemeris: ephemeris)

    func date(_ text: String) -> CivilDate {
        let p = text.split(separator: "-").map { Int($0)! }
        return CivilDate(year: p[0], month: p[1], day: p[2])
    }

    @Test("Chinese New Year (Hong Kong Observatory tables) 1900–2100")
    func chineseNewYear() async throws {
        let known = ["1900-01-31", "1912-02-18", "1916-02-03", "1929-02-10", "1950-02-17", "1985-02-20", "1990-01-27", "2000-02-05", "2017-01-28", "2020-01-25",
                     "2023-01-22", "2024-02-10", "2025-01-29", "2026-02-17", "2030-02-03", "2050-01-23", "2100-02-09"]
        for text in known {
            let expected = date(text)
            #expect(try await Self.calendars.newYear(expected.year, .chinese) == expected, "\(text)")
        }
    }

    @Test("every Chinese month start 1900–2100 as the published calendar has it (Beijing's meridian 1912–1928: 1916-02-03), but for new moons within 2 minutes of local midnight")
    func everyMonthStart() async throws {
        var ours: [String: String] = [:]  // start → "month,leap"
        for year in 1900...2101 {
            for month in try await Self.calendars.solsticeYear(year, .chinese) where (1900...2100).contains(month.start.year) {
                ours[month.start.description] = "\(month.number),\(month.leap ? 1 : 0)"
            }
        }
        var reference: [String: String] = [:]
        for line in ChineseMonthStarts.csv.split(separator: "\n") {
            let columns = line.split(separator: ",", maxSplits: 1)
            reference[String(columns[0])] = String(columns[1])
        }
        #expect(reference.count == 2487)
        var differences: [String] = []
        for start in Set(ours.keys).union(reference.keys).sorted() where ours[start] != reference[start] {
            differences.append("\(start): ours \(ours[start] ?? "-"), published \(reference[start] ?? "-")")
        }
        // A month whose new moon falls within two minutes of local midnight may start a day apart (ΔT and the
        // ephemeris decide); those are listed in docs/architecture.md as uncertain. Anything else is a defect.
        let uncertain = try await Self.nearMidnightNewMoons()
        let unexplained = differences.filter { difference in !uncertain.contains { difference.hasPrefix($0) || difference.contains($0) } }
        #expect(unexplained.isEmpty, "\(unexplained.count) of \(differences.count) differences unexplained: \(unexplained.prefix(12))")
        // Today: 2097-08 only (its new moon about a minute from midnight at UTC+8), listed in docs/architecture.md.
        #expect(differences.count <= 2, "\(differences)")
    }

    /// Local dates (both sides of midnight) of the new moons 1900–2100 that fall within 2 minutes of local midnight
    /// in the Chinese calendar's reckoning.
    static func nearMidnightNewMoons() async throws -> [String] {
        try await ephemeris.compute { session in
            var list: [String] = []
            var jd = session.julianDay(year: 1899, month: 12, day: 1, hour: 0)
            let end = session.julianDay(year: 2101, month: 1, day: 1, hour: 0)
            while jd < end {
                let moon = try session.newMoon(after: jd)
                let date = CivilDate(julianDayUT: moon, offsetHours: 0)
                let offset = LunisolarCalendar.chinese.offsetHours(year: date.year)
                let local = (moon + offset / 24 + 0.5).truncatingRemainder(dividingBy: 1) * 1440  // minutes after local midnight
                if local < 2 || local > 1438 {
                    list.append(CivilDate(julianDayUT: moon, offsetHours: offset).description)
                    list.append(CivilDate(julianDayUT: moon, offsetHours: offset).adding(days: local < 2 ? -1 : 1).description)
                }
                jd = moon + 20
            }
            return list
        }
    }

    @Test("Vietnamese Tết follows UTC+7 and differs where the new moon falls between 16:00 and 17:00 UTC")
    func tet() async throws {
        #expect(try await Self.calendars.newYear(1985, .vietnamese) == date("1985-01-21"))
        #expect(try await Self.calendars.newYear(1985, .chinese) == date("1985-02-20"))
        #expect(try await Self.calendars.newYear(2007, .vietnamese) == date("2007-02-17"))
        #expect(try await Self.calendars.newYear(2007, .chinese) == date("2007-02-18"))
        #expect(try await Self.calendars.newYear(2024, .vietnamese) == date("2024-02-10"))
    }

    @Test("leap months where the tables have them: 2017 leap 6, 2020 leap 4, 2023 leap 2, 2025 leap 6, 2033 leap 11")
    func leapMonths() async throws {
        #expect(try await Self.calendars.gregorian(year: 2017, month: 6, leap: true, day: 1, .chinese) == date("2017-07-23"))
        #expect(try await Self.calendars.gregorian(year: 2020, month: 4, leap: true, day: 1, .chinese) == date("2020-05-23"))
        #expect(try await Self.calendars.gregorian(year: 2023, month: 2, leap: true, day: 1, .chinese) == date("2023-03-22"))
        #expect(try await Self.calendars.gregorian(year: 2025, month: 6, leap: true, day: 1, .chinese) == date("2025-07-25"))
        #expect(try await Self.calendars.gregorian(year: 2033, month: 11, leap: true, day: 1, .chinese) == date("2033-12-22"))
        #expect(try await Self.calendars.gregorian(year: 2024, month: 3, leap: true, day: 1, .chinese) == nil)
        let lunar = try await Self.calendars.lunarDate(of: date("2023-04-01"), .chinese)
        #expect(lunar == .init(year: 2023, month: 2, leap: true, day: 11, monthLength: 29))
    }

    @Test("properties 1900–2100: months of 29 or 30 days, 12 or 13 per solstice year, leap only without a major term, round trips")
    func properties() async throws {
        for year in stride(from: 1901, through: 2100, by: 7) {
            for calendar in LunisolarCalendar.allCases {
                let months = try await Self.calendars.solsticeYear(year, calendar)
                #expect([12, 13].contains(months.count), "\(year)")
                #expect(months.filter(\.leap).count == (months.count == 13 ? 1 : 0), "\(year)")
                #expect(months.allSatisfy { [29, 30].contains($0.length) })
                #expect(months.first?.number == 11 && !(months.first?.leap ?? true))
                for (a, b) in zip(months, months.dropFirst()) { #expect(a.start.adding(days: a.length) == b.start) }
                for month in months {
                    let back = try await Self.calendars.gregorian(year: month.year, month: month.number, leap: month.leap, day: month.length, calendar)
                    #expect(back == month.start.adding(days: month.length - 1))
                }
            }
        }
    }

    @Test("solar terms: 2024 equinox and solstice to the minute; the 24 terms of a year in order, 14–16 days apart")
    func solarTerms() async throws {
        let (equinox, solstice, terms) = try await Self.ephemeris.compute { s -> (Double, Double, [Double]) in
            let start = s.julianDay(year: 2024, month: 1, day: 1, hour: 0)
            var terms: [Double] = []
            var jd = start
            for k in 0..<24 {
                jd = try s.sunCrossing(Double((285 + 15 * k) % 360), after: jd)
                terms.append(jd)
            }
            return (try s.sunCrossing(0, after: start), try s.sunCrossing(270, after: start), terms)
        }
        #expect(abs(equinox - (2_460_389.5 + (3 * 60 + 6) / 1440.0)) * 1440 < 2, "2024-03-20 03:06 UTC")
        #expect(abs(solstice - (2_460_665.5 + (9 * 60 + 20) / 1440.0)) * 1440 < 2, "2024-12-21 09:20 UTC")
        for (a, b) in zip(terms, terms.dropFirst()) { #expect((14...16.5).contains(b - a)) }
    }

    @Test("the cached solar terms give the same 15° band as the Sun's computed longitude, 1900–2100")
    func bands() async throws {
        var generator = SplitMix(seed: 7)
        for _ in 0..<300 {
            let jd = 2_415_020.5 + Double(generator.next() % 73_049) + Double(generator.next() % 1440) / 1440
            let year = CivilDate(julianDayUT: jd, offsetHours: 0).year
            let band = try await Self.calendars.solarLongitudeBand(at: jd, year: year)
            let exact = try await Self.ephemeris.compute { try $0.sunLongitude(julianDayUT: jd) }
            #expect(band == (exact / 15).rounded(.down) * 15, "JD \(jd): \(band) vs \(exact)")
        }
    }

    @Test("Four Pillars of the spec's scenario (Kyiv 1990-04-15 14:30): Geng-Wu, Geng-Chen, Geng-Xu, Gui-Wei")
    func kyivPillars() async throws {
        try await AstrologyHarness.run { h in
            let response = try await h.client.execute(uri: "/v1/astrology/bazi", method: .post, headers: [.authorization: "Bearer \(h.token)", .contentType: "application/json"],
                                                      body: ByteBuffer(string: #"{"date":"1990-04-15","time":"14:30","place":{"latitude":50.4501,"longitude":30.5234,"timeZone":"Europe/Kyiv"}}"#))
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let json = response.json
            let pillars = try #require(json["pillars"] as? [[String: Any]])
            #expect(pillars.map { "\($0["stem"]!)-\($0["branch"]!)" } == ["Geng-Wu", "Geng-Chen", "Geng-Xu", "Gui-Wei"])
            #expect(pillars.map { $0["meaning"] as? String } == ["Destiny", "Environment", "Essence", "Inner Heart"])
            #expect((json["dayMaster"] as? [String: Any])?["element"] as? String == "metal")
            #expect(json["zodiacAnimal"] as? String == "horse")
            let elements = try #require(json["elements"] as? [String: Int])
            #expect(elements.values.reduce(0, +) == 8)
            #expect(json["birth"] == nil && json["date"] == nil, "no raw birth data beyond the request")
        }
    }

    @Test("the day pillar turns at 23:00 by default, at midnight on request; the 60-day cycle")
    func dayBoundary() {
        let d = CivilDate(year: 1990, month: 4, day: 15)
        let late = FourPillars.compute(sunLongitude: 25, gregorianYear: 1990, localDate: d, hour: 23, dayBoundary: .zi2300)
        #expect(late.day.name == "Xin-Hai" && late.hour.name == "Wu-Zi")
        let midnight = FourPillars.compute(sunLongitude: 25, gregorianYear: 1990, localDate: d, hour: 23, dayBoundary: .midnight)
        // The day stays with the midnight boundary; the late Zi hour still takes the next day's stem (Xin → Wu-Zi).
        #expect(midnight.day.name == "Geng-Xu" && midnight.hour.name == "Wu-Zi")
        #expect(FourPillars.compute(sunLongitude: 280, gregorianYear: 2000, localDate: .init(year: 2000, month: 1, day: 1), hour: 12, dayBoundary: .zi2300).day.name == "Wu-Wu")
        #expect(FourPillars.compute(sunLongitude: 280, gregorianYear: 1900, localDate: .init(year: 1900, month: 1, day: 1), hour: 12, dayBoundary: .zi2300).day.name == "Jia-Xu")
        // A published anchor: 1949-10-01 was a Jia-Zi day.
        #expect(FourPillars.compute(sunLongitude: 188, gregorianYear: 1949, localDate: .init(year: 1949, month: 10, day: 1), hour: 12, dayBoundary: .zi2300).day.name == "Jia-Zi")
        for offset in 0..<120 {
            let a = FourPillars.compute(sunLongitude: 0, gregorianYear: 2000, localDate: d.adding(days: offset), hour: 12, dayBoundary: .zi2300).day
            let b = FourPillars.compute(sunLongitude: 0, gregorianYear: 2000, localDate: d.adding(days: offset + 60), hour: 12, dayBoundary: .zi2300).day
            #expect(a == b)
        }
    }

    /// Births in and around the late Zi hour, as lunar-python 1.4 reads them (`EightChar`, sect 1 = the day turns at
    /// 23:00, sect 2 = at midnight): date, clock time, then day and hour pillars for sect 1, then for sect 2.
    /// Generated once with `Solar.fromYmdHms(…).getLunar().getEightChar()`; 1984-02-04 23:16 is the issue's example.
    static let lunarPython: [(date: String, time: String, day2300: String, hour2300: String, dayMidnight: String, hourMidnight: String)] = [
        ("1984-02-04", "23:16", "Ji-Si", "Jia-Zi", "Wu-Chen", "Jia-Zi"),
        ("1993-08-25", "23:21", "Ji-Mao", "Jia-Zi", "Wu-Yin", "Jia-Zi"),
        ("1978-04-28", "23:55", "Xin-You", "Wu-Zi", "Geng-Shen", "Wu-Zi"),
        ("2063-07-03", "23:15", "Gui-Si", "Ren-Zi", "Ren-Chen", "Ren-Zi"),
        ("2081-11-09", "23:03", "Ding-Chou", "Geng-Zi", "Bing-Zi", "Geng-Zi"),
        ("1944-02-17", "23:59", "Ren-Zi", "Geng-Zi", "Xin-Hai", "Geng-Zi"),
        ("2065-07-11", "23:43", "Ren-Zi", "Geng-Zi", "Xin-Hai", "Geng-Zi"),
        ("1949-03-13", "23:45", "Gui-Mao", "Ren-Zi", "Ren-Yin", "Ren-Zi"),
        ("2091-03-26", "23:40", "Xin-Si", "Wu-Zi", "Geng-Chen", "Wu-Zi"),
        ("1991-06-17", "23:34", "Ji-Wei", "Jia-Zi", "Wu-Wu", "Jia-Zi"),
        ("2084-11-20", "23:39", "Jia-Chen", "Jia-Zi", "Gui-Mao", "Jia-Zi"),
        ("1964-05-20", "23:29", "Geng-Wu", "Bing-Zi", "Ji-Si", "Bing-Zi"),
        ("2004-06-26", "23:30", "Ding-Chou", "Geng-Zi", "Bing-Zi", "Geng-Zi"),
        ("1948-09-11", "23:43", "Geng-Zi", "Bing-Zi", "Ji-Hai", "Bing-Zi"),
        ("2031-10-17", "23:09", "Xin-Mao", "Wu-Zi", "Geng-Yin", "Wu-Zi"),
        ("2063-09-17", "23:27", "Ji-You", "Jia-Zi", "Wu-Shen", "Jia-Zi"),
        ("1987-02-14", "23:06", "Yi-Wei", "Bing-Zi", "Jia-Wu", "Bing-Zi"),
        ("2063-07-28", "23:10", "Wu-Wu", "Ren-Zi", "Ding-Si", "Ren-Zi"),
        ("1933-11-20", "23:03", "Xin-Mao", "Wu-Zi", "Geng-Yin", "Wu-Zi"),
        ("2024-06-07", "23:32", "Gui-Mao", "Ren-Zi", "Ren-Yin", "Ren-Zi"),
        ("2031-11-20", "23:52", "Yi-Chou", "Bing-Zi", "Jia-Zi", "Bing-Zi"),
        ("2000-05-24", "23:01", "Gui-Wei", "Ren-Zi", "Ren-Wu", "Ren-Zi"),
        ("2031-03-10", "23:43", "Geng-Xu", "Bing-Zi", "Ji-You", "Bing-Zi"),
        ("2006-11-26", "23:07", "Geng-Shen", "Bing-Zi", "Ji-Wei", "Bing-Zi"),
        ("2018-04-25", "23:32", "Wu-Zi", "Ren-Zi", "Ding-Hai", "Ren-Zi"),
        ("1929-08-09", "23:53", "Ding-Hai", "Geng-Zi", "Bing-Xu", "Geng-Zi"),
        ("1948-12-04", "23:46", "Jia-Zi", "Jia-Zi", "Gui-Hai", "Jia-Zi"),
        ("2046-11-07", "23:39", "Xin-Wei", "Wu-Zi", "Geng-Wu", "Wu-Zi"),
        ("1906-06-08", "23:49", "Jia-Shen", "Jia-Zi", "Gui-Wei", "Jia-Zi"),
        ("1949-01-15", "23:55", "Bing-Wu", "Wu-Zi", "Yi-Si", "Wu-Zi"),
        ("2044-11-14", "23:43", "Wu-Chen", "Ren-Zi", "Ding-Mao", "Ren-Zi"),
        ("1942-11-16", "23:14", "Jia-Xu", "Jia-Zi", "Gui-You", "Jia-Zi"),
        ("1931-01-28", "23:26", "Jia-Shen", "Jia-Zi", "Gui-Wei", "Jia-Zi"),
        ("1966-09-03", "23:05", "Bing-Yin", "Wu-Zi", "Yi-Chou", "Wu-Zi"),
        ("1907-10-10", "23:58", "Gui-Si", "Ren-Zi", "Ren-Chen", "Ren-Zi"),
        ("1950-02-28", "23:23", "Yi-Wei", "Bing-Zi", "Jia-Wu", "Bing-Zi"),
        ("2078-07-28", "23:45", "Ding-Chou", "Geng-Zi", "Bing-Zi", "Geng-Zi"),
        ("2081-12-28", "23:47", "Bing-Yin", "Wu-Zi", "Yi-Chou", "Wu-Zi"),
        ("1912-04-24", "23:09", "Xin-Wei", "Wu-Zi", "Geng-Wu", "Wu-Zi"),
        ("1948-07-22", "23:19", "Ji-You", "Jia-Zi", "Wu-Shen", "Jia-Zi"),
        ("2089-04-28", "00:03", "Gui-Mao", "Ren-Zi", "Gui-Mao", "Ren-Zi"),
        ("1993-01-24", "00:57", "Yi-Si", "Bing-Zi", "Yi-Si", "Bing-Zi"),
        ("2083-01-28", "00:08", "Xin-Chou", "Wu-Zi", "Xin-Chou", "Wu-Zi"),
        ("2094-11-09", "00:14", "Jia-Shen", "Jia-Zi", "Jia-Shen", "Jia-Zi"),
        ("2051-07-04", "01:06", "Geng-Yin", "Ding-Chou", "Geng-Yin", "Ding-Chou"),
        ("1993-10-12", "01:50", "Bing-Yin", "Ji-Chou", "Bing-Yin", "Ji-Chou"),
        ("1931-05-10", "01:45", "Yi-Chou", "Ding-Chou", "Yi-Chou", "Ding-Chou"),
        ("2067-01-11", "01:59", "Geng-Shen", "Ding-Chou", "Geng-Shen", "Ding-Chou"),
        ("2062-11-17", "22:16", "Jia-Chen", "Yi-Hai", "Jia-Chen", "Yi-Hai"),
        ("2067-05-11", "22:27", "Geng-Shen", "Ding-Hai", "Geng-Shen", "Ding-Hai"),
        ("2068-03-23", "22:26", "Ding-Chou", "Xin-Hai", "Ding-Chou", "Xin-Hai"),
        ("1935-07-27", "22:40", "Jia-Chen", "Yi-Hai", "Jia-Chen", "Yi-Hai"),
    ]

    @Test("the late Zi hour (23:00–23:59) takes the next day's stem under both boundaries, as lunar-python, sxtwl and cnlunar do", arguments: [0, 1])
    func lateZiHour(boundary: Int) {
        for c in Self.lunarPython {
            let parts = c.date.split(separator: "-").compactMap { Int($0) }
            let date = CivilDate(year: parts[0], month: parts[1], day: parts[2])
            let hour = Int(c.time.prefix(2)) ?? -1
            // The Sun's longitude decides only the year and month pillars, not compared here.
            let pillars = FourPillars.compute(sunLongitude: 100, gregorianYear: parts[0], localDate: date, hour: hour,
                                              dayBoundary: boundary == 0 ? .zi2300 : .midnight)
            let expected = boundary == 0 ? (c.day2300, c.hour2300) : (c.dayMidnight, c.hourMidnight)
            #expect(pillars.day.name == expected.0 && pillars.hour.name == expected.1, "\(c.date) \(c.time)")
        }
    }

    @Test("zodiac animal by the lunar new year, and separately by Li Chun")
    func animals() async throws {
        try await AstrologyHarness.run { h in
            func animals(_ date: String) async throws -> String {
                let json = try await h.client.execute(uri: "/v1/astrology/bazi", method: .post, headers: [.authorization: "Bearer \(h.token)", .contentType: "application/json"],
                                                      body: ByteBuffer(string: #"{"date":"\#(date)","time":"12:00","place":{"latitude":39.9,"longitude":116.4,"timeZone":"Asia/Shanghai"}}"#)).json
                return "\(json["zodiacAnimal"] as? String ?? "?")/\(json["solarYearAnimal"] as? String ?? "?")"
            }
            // After Li Chun (4 Feb) but before the new year (10 Feb): still the rabbit by the lunar year.
            let (beforeNewYear, newYear, january) = (try await animals("2024-02-05"), try await animals("2024-02-10"), try await animals("1990-01-20"))
            #expect(beforeNewYear == "rabbit/dragon")
            #expect(newYear == "dragon/dragon")
            #expect(january == "snake/snake")
        }
    }

    @Test("the zodiac sign is the lunar year's, animal and element alike: every day 1900–2100 between the lunar new year and Li Chun against lunar-python")
    func lunarYearSign() async throws {
        // Reference/lunar-year-windows.tsv: scripts/reference/lunar-year-windows.py, from lunar-python (PyPI).
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Reference/lunar-year-windows.tsv")
        let rows = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
            .map { $0.split(separator: "\t").map(String.init) }
        #expect(rows.count > 1400 && rows.allSatisfy { $0.count == 3 })
        try await AstrologyHarness.run { h in
            var wrong: [String] = []
            for row in rows {
                let reply = try await h.client.execute(uri: "/v1/astrology/bazi", method: .post,
                                                       headers: [.authorization: "Bearer \(h.token)", .contentType: "application/json"],
                                                       body: ByteBuffer(string: #"{"date":"\#(row[0])","time":"12:00","place":{"latitude":39.9,"longitude":116.4,"timeZone":"Asia/Shanghai"}}"#))
                let answer = try JSONDecoder().decode(BaziAnswer.self, from: Data(reply.body.readableBytesView))
                let year = answer.lunarYear
                if "\(year.stem)-\(year.branch)" != row[1] || year.animal != answer.zodiacAnimal || Stem.allCases.first(where: { $0.name == year.stem })?.element.rawValue != year.element {
                    wrong.append("\(row[0]): \(year.stem)-\(year.branch) \(year.element) \(year.animal), lunar-python \(row[1])")
                }
            }
            #expect(wrong.isEmpty, "\(wrong.count) of \(rows.count) days: \(wrong.prefix(10))")
            // The issue's two examples, and the year pillar still by Li Chun.
            for (date, sign, pillar) in [("1990-01-30", "metal horse", "Ji-Si"), ("2024-02-07", "water rabbit", "Jia-Chen")] {
                let reply = try await h.client.execute(uri: "/v1/astrology/bazi", method: .post,
                                                       headers: [.authorization: "Bearer \(h.token)", .contentType: "application/json"],
                                                       body: ByteBuffer(string: #"{"date":"\#(date)","time":"12:00","place":{"latitude":39.9,"longitude":116.4,"timeZone":"Asia/Shanghai"}}"#))
                let answer = try JSONDecoder().decode(BaziAnswer.self, from: Data(reply.body.readableBytesView))
                #expect("\(answer.lunarYear.element) \(answer.lunarYear.animal)" == sign, "\(date)")
                #expect(answer.pillars.first.map { "\($0.stem)-\($0.branch)" } == pillar, "\(date)")
            }
        }
    }

    @Test("content reaches Ba Zi and the calendars under /internal with its service token; app tokens and other services cannot")
    func internalRoutes() async throws {
        let identity = try await FakeIdentity()
        try await identity.serve { url in
            try await TestEnvironment.withDatabase { database in
                let prefix = TestEnvironment.uniquePrefix()
                let settings = Settings.fixed(["IDENTITY_URL": url.absoluteString, "LOG_LEVEL": "warning", "OPS_PORT": "0", "DATABASE_URL": database,
                                                "CHART_FINGERPRINT_KEY": "test-chart-fingerprint-key",
                                                "REDIS_URL": try await TestEnvironment.redisURL(for: "astrology", prefix: prefix), "STREAM_PREFIX": prefix])
                let app = try await buildAstrologyApplication(try AstrologyConfiguration(settings: settings), logger: TestEnvironment.logger)
                let service = try await identity.issuer.issueServiceToken(service: "content")
                let user = try await identity.token(app: .luckyday)
                try await app.test(.router) { client in
                    let festivals = try await client.execute(uri: "/internal/astrology/calendar/festivals?year=2026&calendar=vietnamese", method: .get,
                                                             headers: [.authorization: "Bearer \(service)"])
                    #expect(festivals.status == .ok)
                    #expect((festivals.json["festivals"] as? [[String: Any]])?.contains { $0["key"] as? String == "tet" && $0["date"] as? String == "2026-02-17" } == true)
                    let bazi = try await client.execute(uri: "/internal/astrology/bazi", method: .post,
                                                        headers: [.authorization: "Bearer \(service)", .contentType: "application/json"],
                                                        body: ByteBuffer(string: #"{"date":"1990-04-15","time":null,"place":{"latitude":50.45,"longitude":30.52,"timeZone":"Europe/Kyiv"}}"#))
                    #expect(bazi.status == .ok && (bazi.json["pillars"] as? [Any])?.count == 3)
                    // The contract content compiles against reads the real answer.
                    let answer = try JSONDecoder().decode(BaziAnswer.self, from: Data(bazi.body.readableBytesView))
                    #expect(answer.pillars.map(\.role) == ["year", "month", "day"] && !answer.timeKnown && answer.lunarDate.year == 1990)
                    let asApp = try await client.execute(uri: "/internal/astrology/calendar/lunar?date=2024-02-10", method: .get, headers: [.authorization: "Bearer \(user)"])
                    #expect(asApp.status == .unauthorized || asApp.status == .forbidden)
                    let asService = try await client.execute(uri: "/v1/astrology/calendar/lunar?date=2024-02-10", method: .get, headers: [.authorization: "Bearer \(service)"])
                    #expect(asService.status == .unauthorized || asService.status == .forbidden)
                    // The routes name their callers: another service's token is refused, whatever the route.
                    let other = try await identity.issuer.issueServiceToken(service: "gamification")
                    for (uri, method) in [("/internal/astrology/calendar/festivals?year=2026&calendar=vietnamese", HTTPRequest.Method.get),
                                          ("/internal/astrology/bazi", .post), ("/internal/astrology/charts/natal", .post)] {
                        let refused = try await client.execute(uri: uri, method: method, headers: [.authorization: "Bearer \(other)", .contentType: "application/json"],
                                                               body: ByteBuffer(string: "{}"))
                        #expect(refused.status == .forbidden && refused.json["code"] as? String == "caller_not_allowed", "\(uri)")
                    }
                }
            }
        }
    }

    @Test("calendar endpoints: conversions both ways, festivals, and 4xx naming the field")
    func endpoints() async throws {
        try await AstrologyHarness.run { h in
            func get(_ uri: String) async throws -> TestResponse {
                try await h.client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(h.token)"])
            }
            let lunar = try await get("/v1/astrology/calendar/lunar?date=2024-09-17&calendar=chinese").json
            #expect((lunar["lunar"] as? [String: Any])?["month"] as? Int == 8 && (lunar["lunar"] as? [String: Any])?["day"] as? Int == 15)
            #expect(lunar["animal"] as? String == "dragon")
            let solar = try await get("/v1/astrology/calendar/gregorian?year=2023&month=2&leap=true&day=1").json
            #expect(solar["gregorian"] as? String == "2023-03-22")
            let festivals = try await get("/v1/astrology/calendar/festivals?year=2024&calendar=chinese").json
            let byKey = Dictionary(uniqueKeysWithValues: (festivals["festivals"] as? [[String: Any]] ?? []).map { ($0["key"] as! String, $0["date"] as! String) })
            #expect(byKey["spring_festival"] == "2024-02-10" && byKey["mid_autumn"] == "2024-09-17" && byKey["dragon_boat"] == "2024-06-10")
            #expect(byKey["qingming"] == "2024-04-04" && byKey["dongzhi"] == "2024-12-21" && byKey["new_years_eve"] == "2025-01-28")
            let tet = try await get("/v1/astrology/calendar/festivals?year=1985&calendar=vietnamese").json
            #expect((tet["festivals"] as? [[String: Any]])?.first { $0["key"] as? String == "tet" }?["date"] as? String == "1985-01-21")

            #expect(try await get("/v1/astrology/calendar/lunar?date=2024-02-30").invalidFields == ["date"])
            #expect(try await get("/v1/astrology/calendar/lunar?date=2024-02-01&calendar=mayan").invalidFields == ["calendar"])
            let missing = try await get("/v1/astrology/calendar/gregorian?year=2024&month=3&leap=true&day=1")
            #expect(missing.status == .unprocessableContent && missing.json["code"] as? String == "no_such_lunar_date")
            #expect(Set(try await get("/v1/astrology/calendar/gregorian?year=1800&month=13&day=31&leap=maybe").invalidFields) == ["year", "month", "day", "leap"])
        }
    }
}
