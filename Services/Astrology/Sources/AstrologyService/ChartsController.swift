import Crypto
import Ephemeris
import Foundation
import Hummingbird
import LanternCore
import LanternHTTP
import NIOCore

/// `POST /v1/astrology/charts/natal`: a natal chart from birth data. Stateless — the birth data is neither stored
/// nor logged; only its keyed fingerprint leaves with the answer.
struct ChartsController: Sendable {
    let ephemeris: SwissEphemeris
    let fingerprintKey: SymmetricKey
    let places: PlaceStore

    struct Place: Decodable {
        /// A gazetteer id (from /v1/astrology/places) instead of the three fields below.
        var id: Int?
        var latitude: Double?
        var longitude: Double?
        var timeZone: String?
    }

    struct NatalRequest: Decodable {
        /// `YYYY-MM-DD`, local calendar date at the place.
        var date: String?
        /// `HH:MM` local clock time; absent or null when unknown.
        var time: String?
        var place: Place?
        /// For a local time that occurred twice (DST ended): `earlier` (default) or `later`.
        var fold: String?
        /// Orbs in degrees per aspect type, replacing the defaults.
        var orbs: [String: Double]?
    }

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

    struct Warning: Encodable {
        var code: String
        var message: String
    }

    struct NatalResponse: Encodable, Sendable {
        var ephemeris: EphemerisSource
        var birth: Birth
        var planets: [NatalChart.Planet]
        var houses: NatalChart.HouseSet
        var aspects: [NatalChart.Aspect]
        var orbs: [String: Double]
        var fingerprint: String
        var warnings: [Warning]
    }

    /// `/v1/astrology/charts`: the natal chart as JSON and as SVG.
    var endpoints: RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.post("natal", use: natal)
        routes.post("natal.svg", use: natalSVG)
        return routes
    }

    @Sendable func natal(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<NatalResponse> {
        JSONResponse(try await chart(try await request.decodeJSON(as: NatalRequest.self, context: context)))
    }

    /// The same chart drawn as SVG (`?theme=light|dark`).
    @Sendable func natalSVG(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let themeText = request.uri.queryParameters["theme"].map(String.init) ?? "light"
        guard let theme = ChartSVG.Theme(rawValue: themeText) else { throw Problem.invalid(field: "theme", "must be light or dark") }
        let answer = try await chart(try await request.decodeJSON(as: NatalRequest.self, context: context))
        let svg = ChartSVG.render(NatalChart(planets: answer.planets, houses: answer.houses, aspects: answer.aspects), theme: theme)
        return Response(status: .ok, headers: [.contentType: "image/svg+xml; charset=utf-8", .cacheControl: "private, max-age=86400"],
                        body: .init(byteBuffer: ByteBuffer(string: svg)))
    }

    func chart(_ request: NatalRequest) async throws -> NatalResponse {
        var body = request
        body.place = try await body.place?.resolved(with: places)
        var validator = FieldValidator()
        let input = try Self.validate(body, &validator)
        let resolved = try input.moment.resolveForRequest(fold: input.fold)
        let (place, orbs, moment) = (input.place, input.orbs, input.moment)
        let computed = try await ephemeris.compute { session -> (Double, [BodyPosition], Houses) in
            var utc = Calendar(identifier: .gregorian)
            utc.timeZone = TimeZone(identifier: "UTC")!
            let c = utc.dateComponents([.year, .month, .day, .hour, .minute, .second], from: resolved.utc)
            let jd = try session.julianDayUT(year: c.year ?? 0, month: c.month ?? 0, day: c.day ?? 0, hour: c.hour ?? 0, minute: c.minute ?? 0,
                                             second: Double(c.second ?? 0))
            let positions = try Body.allCases.map { try session.position(of: $0, julianDayUT: jd) }
            return (jd, positions, session.houses(julianDayUT: jd, latitude: place.latitude, longitude: place.longitude))
        }
        let (jd, positions, houses) = computed
        let chart = NatalChart.compute(positions: positions, houses: houses, timeKnown: moment.timeKnown, orbs: orbs)

        var warnings: [Warning] = []
        if !moment.timeKnown {
            warnings.append(Warning(code: "time_unknown", message: "No birth time: the chart is cast for local noon; houses, Ascendant and MC are unreliable, and the Moon may be up to 7° off."))
        }
        if let fold = resolved.ambiguity {
            let (code, message) = moment.ambiguityWarning(fold)
            warnings.append(Warning(code: code, message: message))
        }
        if houses.system == .porphyry {
            warnings.append(Warning(code: "placidus_undefined", message: "Placidus houses do not exist at this latitude (inside a polar circle); Porphyry houses are given instead."))
        }
        let source: EphemerisSource = positions.allSatisfy { $0.source == .swiss } ? .swiss : .moshier
        if source == .moshier {
            warnings.append(Warning(code: "moshier_ephemeris", message: "The Swiss Ephemeris data files are missing; positions come from the Moshier theory (about 1″ for planets, a few ″ for the Moon)."))
        }
        let birth = Birth(localDateTime: moment.local, timeKnown: moment.timeKnown, timeZone: moment.timeZone.identifier,
                          utcOffset: Self.offset(resolved.offsetSeconds), utc: resolved.utc, julianDayUT: jd,
                          latitude: place.latitude, longitude: place.longitude)
        return NatalResponse(
            ephemeris: source, birth: birth, planets: chart.planets, houses: chart.houses, aspects: chart.aspects,
            orbs: Dictionary(uniqueKeysWithValues: AspectType.allCases.map { ($0.rawValue, orbs[$0, default: $0.defaultOrb]) }),
            fingerprint: fingerprint(moment: moment, place: place), warnings: warnings)
    }

    struct ValidPlace: Sendable { var latitude: Double; var longitude: Double }
    struct Input: Sendable { var moment: BirthMoment; var place: ValidPlace; var fold: BirthMoment.Fold?; var orbs: [AspectType: Double] }

    /// Checks every field, adding mistakes to `v` (which may already hold the caller's own), and throws them all
    /// at once, each naming its field.
    static func validate(_ body: NatalRequest, _ v: inout FieldValidator) throws -> Input {
        var ymd: CivilDate?
        if let date = body.date {
            ymd = CivilDate(parsing: date)
            v.check(ymd != nil, "date", "must be a real date YYYY-MM-DD between 1900-01-01 and 2100-12-31")
        } else {
            v.fail("date", "is required (YYYY-MM-DD)")
        }
        var hm: (Int, Int)?
        if let time = body.time {
            let parts = time.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
            if time.count == 5, parts.count == 2, let h = parts[0], let m = parts[1], (0...23).contains(h), (0...59).contains(m) {
                hm = (h, m)
            } else {
                v.fail("time", "must be HH:MM from 00:00 to 23:59, or null when the birth time is unknown")
            }
        }
        var zone: TimeZone?
        if let place = body.place {
            if let lat = place.latitude { v.check(lat.isFinite && (-90...90).contains(lat), "place.latitude", "must be between -90 and 90 degrees") } else {
                v.fail("place.latitude", "is required")
            }
            if let lon = place.longitude { v.check(lon.isFinite && (-180...180).contains(lon), "place.longitude", "must be between -180 and 180 degrees") } else {
                v.fail("place.longitude", "is required")
            }
            if let id = place.timeZone {
                zone = TimeZone.knownTimeZoneIdentifiers.contains(id) || id == "UTC" ? TimeZone(identifier: id) : nil
                v.check(zone != nil, "place.timeZone", "must be an IANA time zone such as Europe/Kyiv")
            } else {
                v.fail("place.timeZone", "is required (an IANA time zone such as Europe/Kyiv)")
            }
        } else {
            v.fail("place", "is required: a gazetteer id, or latitude, longitude and timeZone")
        }
        var fold: BirthMoment.Fold?
        if let text = body.fold {
            fold = BirthMoment.Fold(rawValue: text)
            v.check(fold != nil, "fold", "must be earlier or later")
        }
        var orbs: [AspectType: Double] = [:]
        for (name, value) in body.orbs ?? [:] {
            guard let type = AspectType(rawValue: name) else {
                v.fail("orbs.\(name)", "is not an aspect; use \(AspectType.allCases.map(\.rawValue).joined(separator: ", "))")
                continue
            }
            v.check(value.isFinite && (0...15).contains(value), "orbs.\(name)", "must be between 0 and 15 degrees")
            orbs[type] = value
        }
        try v.validate()
        guard let ymd, let zone, let lat = body.place?.latitude, let lon = body.place?.longitude else {
            throw Problem.badRequest("incomplete request")
        }
        let moment = BirthMoment(year: ymd.year, month: ymd.month, day: ymd.day, hour: hm?.0 ?? 12, minute: hm?.1 ?? 0, timeKnown: hm != nil, timeZone: zone)
        return Input(moment: moment, place: ValidPlace(latitude: lat, longitude: lon), fold: fold, orbs: orbs)
    }

    /// HMAC-SHA256 of the normalised birth data (date, time or "unknown", place to 4 decimals ≈ 11 m, zone), hex.
    func fingerprint(moment: BirthMoment, place: ValidPlace) -> String {
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
