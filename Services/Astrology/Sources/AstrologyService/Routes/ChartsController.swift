import Ephemeris
import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP
import NIOCore

/// `POST /v1/astrology/charts/natal` (JSON) and `natal.svg`: decodes the birth data, resolves a gazetteer place,
/// checks every field, and answers with what `NatalCharts` cast.
struct ChartsController: Sendable {
    let charts: NatalCharts
    let places: PlaceStore

    struct NatalRequest: Decodable {
        /// `YYYY-MM-DD`, local calendar date at the place.
        var date: String?
        /// `HH:MM` local clock time; absent or null when unknown.
        var time: String?
        var place: BirthPlace?
        /// For a local time that occurred twice (DST ended): `earlier` (default) or `later`.
        var fold: String?
        /// Orbs in degrees per aspect type, replacing the defaults.
        var orbs: [String: Double]?
    }

    /// `/v1/astrology/charts`: the natal chart as JSON and as SVG.
    var endpoints: RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.post("natal", use: natal)
        routes.post("natal.svg", use: natalSVG)
        return routes
    }

    @Sendable func natal(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<NatalCharts.NatalResponse> {
        JSONResponse(try await chart(try await request.decodeJSON(as: NatalRequest.self, context: context)))
    }

    /// The same chart drawn as SVG (`?theme=light|dark`). With `?fingerprint=`, only the chart of that fingerprint:
    /// compared before anything is cast (a keyed hash of the normalised birth data), so a caller checking birth data
    /// it was sent against the chart it knows pays for a drawing only when they match.
    @Sendable func natalSVG(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let themeText = request.uri.queryParameters["theme"].map(String.init) ?? "light"
        let expected = request.uri.queryParameters["fingerprint"].map(String.init)
        var v = FieldValidator()
        let theme = ChartSVG.Theme(rawValue: themeText)
        v.check(theme != nil, "theme", "must be light or dark")
        if let expected {
            v.check(expected.utf8.count == 64 && expected.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) },
                    "fingerprint", "must be a chart fingerprint (64 lower-case hex digits)")
        }
        try v.validate()
        guard let theme else { throw Problem.invalid([]) }
        let input = try await birthInput(try await request.decodeJSON(as: NatalRequest.self, context: context))
        if let expected, charts.fingerprint(moment: input.moment, place: input.place) != expected {
            throw Problem(status: 409, code: AstrologyEndpoint.fingerprintMismatch, title: "Another chart",
                          detail: "The birth data is not that of the chart with this fingerprint.")
        }
        let answer = try await charts.cast(input)
        let svg = ChartSVG.render(NatalChart(planets: answer.planets, houses: answer.houses, aspects: answer.aspects), theme: theme)
        return Response(status: .ok, headers: [.contentType: "image/svg+xml; charset=utf-8", .cacheControl: "private, max-age=86400"],
                        body: .init(byteBuffer: ByteBuffer(string: svg)))
    }

    private func chart(_ body: NatalRequest) async throws -> NatalCharts.NatalResponse {
        try await charts.cast(try await birthInput(body))
    }

    private func birthInput(_ body: NatalRequest) async throws -> BirthInput {
        var validator = FieldValidator()
        return try BirthInput.validate(date: body.date, time: body.time, place: try await body.place?.resolved(with: places),
                                       fold: body.fold, orbs: body.orbs, &validator)
    }
}
