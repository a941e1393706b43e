import Crypto
import Ephemeris
import Foundation
import LanternCore

/// Casting a natal chart: the birth instant in UT (UTC taken as UT), ten bodies and the houses from the ephemeris, signs and aspects,
/// the warnings the answer needs, and a keyed fingerprint of the birth data. Stateless — the birth data is neither
/// stored nor logged; only its fingerprint leaves with the answer.
struct NatalCharts: Sendable {
    let ephemeris: SwissEphemeris
    let fingerprintKey: SymmetricKey

    struct Birth: Encodable {
        var localDateTime: String
        var timeKnown: Bool
        var timeZone: String
        var utcOffset: String
        var utc: Date
        var julianDayUT: Double
        var latitude: Double
        var longitude: Double
    }

    struct NatalResponse: Encodable, Sendable {
        var ephemeris: EphemerisSource
        var birth: Birth
        var planets: [NatalChart.Planet]
        var houses: NatalChart.HouseSet
        var aspects: [NatalChart.Aspect]
        var orbs: [String: Double]
        var fingerprint: String
        var warnings: [ChartWarning]
    }

    func cast(_ input: BirthInput) async throws -> NatalResponse {
        let resolved = try input.moment.resolve(fold: input.fold)
        let (place, orbs, moment) = (input.place, input.orbs, input.moment)
        let jd = resolved.utc.julianDayUT
        let (positions, houses) = try await ephemeris.compute { session -> ([BodyPosition], Houses) in
            let positions = try Body.allCases.map { try session.position(of: $0, julianDayUT: jd) }
            return (positions, session.houses(julianDayUT: jd, latitude: place.latitude, longitude: place.longitude))
        }
        let chart = NatalChart.compute(positions: positions, houses: houses, timeKnown: moment.timeKnown, orbs: orbs)

        var warnings: [ChartWarning] = []
        if !moment.timeKnown {
            warnings.append(ChartWarning(code: "time_unknown", message: "No birth time: the chart is cast for local noon; houses, Ascendant and MC are unreliable, and the Moon may be up to 7° off."))
        }
        if let fold = resolved.ambiguity {
            let (code, message) = moment.ambiguityWarning(fold)
            warnings.append(ChartWarning(code: code, message: message))
        }
        if houses.system == .porphyry {
            warnings.append(ChartWarning(code: "placidus_undefined", message: "Placidus houses do not exist at this latitude (inside a polar circle); Porphyry houses are given instead."))
        }
        let source: EphemerisSource = positions.allSatisfy { $0.source == .swiss } ? .swiss : .moshier
        if source == .moshier {
            warnings.append(ChartWarning(code: "moshier_ephemeris", message: "The Swiss Ephemeris data files are missing; positions come from the Moshier theory (about 1″ for planets, a few ″ for the Moon)."))
        }
        let birth = Birth(localDateTime: moment.local, timeKnown: moment.timeKnown, timeZone: moment.timeZone.identifier,
                          utcOffset: Self.offset(resolved.offsetSeconds), utc: resolved.utc, julianDayUT: jd,
                          latitude: place.latitude, longitude: place.longitude)
        return NatalResponse(
            ephemeris: source, birth: birth, planets: chart.planets, houses: chart.houses, aspects: chart.aspects,
            orbs: Dictionary(uniqueKeysWithValues: AspectType.allCases.map { ($0.rawValue, orbs[$0, default: $0.defaultOrb]) }),
            fingerprint: fingerprint(moment: moment, place: place), warnings: warnings)
    }

    /// HMAC-SHA256 of the normalised birth data (date, time or "unknown", place to 4 decimals ≈ 11 m, zone), hex.
    func fingerprint(moment: BirthMoment, place: GeoPoint) -> String {
        let time = moment.timeKnown ? String(format: "%02d:%02d", moment.hour, moment.minute) : "unknown"
        let date = String(format: "%04d-%02d-%02d", moment.year, moment.month, moment.day)
        let text = "v1|\(date)|\(time)|\(String(format: "%.4f|%.4f", place.latitude, place.longitude))|\(moment.timeZone.identifier)"
        let mac = HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: fingerprintKey)
        return mac.hexEncoded
    }

    static func offset(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let s = abs(seconds)
        return sign + (s % 60 == 0 ? String(format: "%02d:%02d", s / 3600, s % 3600 / 60)
                                   : String(format: "%02d:%02d:%02d", s / 3600, s % 3600 / 60, s % 60))
    }
}
