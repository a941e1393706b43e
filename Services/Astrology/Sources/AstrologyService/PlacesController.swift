import Foundation
import Hummingbird
import LanternCore
import LanternHTTP

/// `GET /v1/astrology/places?q=…&lang=en|uk&limit=…`: place autocomplete over the offline gazetteer.
struct PlacesController: Sendable {
    let store: PlaceStore

    struct Answer: Encodable, Sendable {
        var places: [Place]
        /// GeoNames' licence requires attribution.
        var attribution = "GeoNames (geonames.org), CC BY 4.0"
    }

    func addRoutes(to router: Router<LanternRequestContext>, requireAuth: RequireAccessToken) {
        router.group("/v1/astrology/places").add(middleware: requireAuth).get(use: search)
    }

    @Sendable func search(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<Answer> {
        let query = request.uri.queryParameters
        var v = FieldValidator()
        let q = query["q"].map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        v.check(!q.isEmpty && q.count <= 100, "q", "must be 1–100 characters of a place name")
        let lang = query["lang"].map(String.init) ?? "en"
        v.check(["en", "uk"].contains(lang), "lang", "must be en or uk")
        let limit = query["limit"].map { Int(String($0)) } ?? 10
        v.check(limit.map { (1...20).contains($0) } ?? false, "limit", "must be a whole number from 1 to 20")
        try v.validate()
        guard let places = try await store.search(q, ukrainian: lang == "uk", limit: limit ?? 10) else {
            throw Problem(status: 503, code: "places_unavailable", title: "Place search unavailable",
                          detail: "The place gazetteer has not been loaded (PLACES_FILE); enter coordinates and a time zone instead.")
        }
        return JSONResponse(Answer(places: places))
    }
}

extension ChartsController.Place {
    /// Fills latitude, longitude and time zone from the gazetteer when the app sent only a place `id`.
    func resolved(with store: PlaceStore) async throws -> ChartsController.Place {
        guard let id, latitude == nil, longitude == nil, timeZone == nil else { return self }
        guard let place = try await store.place(id: id) else {
            throw Problem.invalid(field: "place.id", "is not a place of the gazetteer (search /v1/astrology/places)", code: "unknown_place")
        }
        return .init(id: id, latitude: place.latitude, longitude: place.longitude, timeZone: place.timeZone)
    }
}
