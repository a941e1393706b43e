import Foundation
import LanternContracts
import Hummingbird
import LanternCore
import LanternHTTP

/// `POST /v1/astrology/bazi` (and `/internal/astrology/bazi` for services): decodes and checks the birth data and
/// the options, and answers with the `BaziReadings` reading.
struct BaziController: Sendable {
    let readings: BaziReadings
    let places: PlaceStore

    struct BaziRequest: Decodable {
        var date: String?
        var time: String?
        var place: BirthPlace?
        var fold: String?
        /// `23:00` (default) or `00:00`: when the day pillar changes.
        var dayBoundary: String?
        /// `clock` (default) or `true`: the hour pillar from the clock, or from true solar time at the birthplace.
        var solarTime: String?
    }

    /// Mounted for apps at `/v1/astrology` and for services at `/internal/astrology`.
    var endpoints: RouteCollection<LanternRequestContext> {
        RouteCollection(context: LanternRequestContext.self).post("bazi", use: bazi)
    }

    @Sendable func bazi(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<BaziAnswer> {
        let body = try await request.decodeJSON(as: BaziRequest.self, context: context)
        var v = FieldValidator()
        let boundary = FourPillars.DayBoundary(rawValue: body.dayBoundary ?? "23:00")
        v.check(boundary != nil, "dayBoundary", "must be 23:00 or 00:00")
        let solarTime = BaziReadings.SolarTime(rawValue: body.solarTime ?? "clock")
        v.check(solarTime != nil, "solarTime", "must be clock or true")
        let input = try BirthInput.validate(date: body.date, time: body.time, place: try await body.place?.resolved(with: places),
                                            fold: body.fold, orbs: nil, &v)
        return JSONResponse(try await readings.read(input, dayBoundary: boundary ?? .zi2300, solarTime: solarTime ?? .clock))
    }
}
