import AstrologyService
import Ephemeris
import Foundation

// astrology-bench: in-process cost of a natal chart next to the floor set by the library itself.
// Lives with the service (AGPL-3.0) because it links the Swiss Ephemeris. Run by `make bench`.
let count = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 5_000
let ephemeris = SwissEphemeris()
var generator = SystemRandomNumberGenerator()
let days = (0..<count).map { _ in 2_415_020.5 + Double.random(in: 0..<73_049, using: &generator) }
let places = (0..<count).map { _ in (Double.random(in: -60...60, using: &generator), Double.random(in: -180...180, using: &generator)) }

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

// 1. The floor: ten swe_calc_ut and one swe_houses per chart, timed on the ephemeris thread (no hop, no chart).
let floor = try await ephemeris.compute { session -> (Double, Double) in
    var calc: [Double] = [], houses: [Double] = []
    for i in 0..<count {
        let start = ContinuousClock.now
        for body in Body.allCases { _ = try session.position(of: body, julianDayUT: days[i]) }
        let mid = ContinuousClock.now
        _ = session.houses(julianDayUT: days[i], latitude: places[i].0, longitude: places[i].1)
        let end = ContinuousClock.now
        calc.append(Double((mid - start).components.attoseconds) / 1e12 / 10)
        houses.append(Double((end - mid).components.attoseconds) / 1e12)
    }
    return (percentile(calc, 0.5), percentile(houses, 0.5))
}
print(String(format: "astrology.floor swe_calc_ut_p50=%.1fus swe_houses_p50=%.1fus chart_floor=%.0fus", floor.0, floor.1, floor.0 * 10 + floor.1))

// 2. A whole chart as the service computes it: hop to the ephemeris thread, ten bodies, houses, signs, aspects.
var timings: [Double] = []
for i in 0..<count {
    let start = ContinuousClock.now
    let (positions, houses) = try await ephemeris.compute { session in
        (try Body.allCases.map { try session.position(of: $0, julianDayUT: days[i]) },
         session.houses(julianDayUT: days[i], latitude: places[i].0, longitude: places[i].1))
    }
    let chart = NatalChart.compute(positions: positions, houses: houses, timeKnown: true, orbs: [:])
    precondition(chart.planets.count == 10)
    timings.append(Double((ContinuousClock.now - start).components.attoseconds) / 1e12)
}
print(String(format: "astrology.natal_chart charts=%d p50=%.1fus p99=%.1fus", count, percentile(timings, 0.5), percentile(timings, 0.99)))

// 3. Ba Zi as the service computes it: the Sun's 15° band from the cached solar terms of the year, the pillars,
//    and the lunar date (solstice years cached too): no ephemeris call once a year has been seen.
let calendars = LunisolarCalendars(ephemeris: ephemeris)
for year in 1899...2101 {  // warm the caches, as in a running service
    _ = try await calendars.solsticeYear(year, .chinese)
    _ = try await calendars.solarTerms(year)
}
var bazi: [Double] = []
for i in 0..<count {
    let jd = days[i]
    let start = ContinuousClock.now
    let date = CivilDate(julianDayUT: jd, offsetHours: 2)
    let sun = try await calendars.solarLongitudeBand(at: jd, year: date.year) + 7.5
    let pillars = FourPillars.compute(sunLongitude: sun, gregorianYear: date.year, localDate: date, hour: 14, dayBoundary: .zi2300)
    let lunar = try await calendars.lunarDate(of: date, .chinese)
    precondition(lunar.day >= 1 && pillars.day.stem.rawValue >= 0)
    bazi.append(Double((ContinuousClock.now - start).components.attoseconds) / 1e12)
}
print(String(format: "astrology.bazi count=%d p50=%.1fus p99=%.1fus", count, percentile(bazi, 0.5), percentile(bazi, 0.99)))

// 4. Place search in memory (what the service does per request, before JSON): names being typed, and typos or other
//    spellings (the trigram stage). Needs the gazetteer file (PLACES_FILE, written by scripts/gazetteer.py).
if let file = ProcessInfo.processInfo.environment["PLACES_FILE"], let text = try? String(contentsOfFile: file, encoding: .utf8) {
    let started = ContinuousClock.now
    let index = PlaceIndex(records: GazetteerRecord.parse(text))
    let built = ContinuousClock.now - started
    let typed = ["ky", "kyi", "kyiv", "lv", "lviv", "ode", "odesa", "khar", "kharkiv", "dnipro", "lon", "london", "par", "paris",
                 "new y", "tok", "tokyo", "sao p", "berl", "warsaw", "київ", "k", "s"]
    let typos = ["kiev", "lvov", "kharkiw", "zaporizhzhia", "oddesa", "mykolajiw", "londn", "pariss", "tokio", "warszawa"]
    for (name, queries) in [("prefix", typed), ("typos", typos)] {
        var times: [Double] = []
        for i in 0..<count {
            let start = ContinuousClock.now
            let found = index.search(PlaceIndex.fold(queries[i % queries.count]), limit: 10)
            times.append(Double((ContinuousClock.now - start).components.attoseconds) / 1e12)
            precondition(!found.isEmpty)
        }
        print(String(format: "astrology.places_%@ searches=%d p50=%.1fus p99=%.1fus", name, count, percentile(times, 0.5), percentile(times, 0.99)))
    }
    print(String(format: "astrology.places_index places=%d build=%.2fs", index.count, Double(built.components.attoseconds) / 1e18 + Double(built.components.seconds)))
}
try await ephemeris.shutdown()
