import Foundation
import Hummingbird
import LanternCore
import LanternHTTP
import NIOCore
import Synchronization

/// `GET /v1/astrology/places?q=…&lang=en|uk&limit=…`: place autocomplete over the offline gazetteer.
struct PlacesController: Sendable {
    let store: PlaceStore
    let encoded = EncodedPlaces()

    struct Answer: Encodable, Sendable {
        var places: [Place]
        /// GeoNames' licence requires attribution.
        var attribution = "GeoNames (geonames.org), CC BY 4.0"
    }

    /// `/v1/astrology/places`: search.
    var endpoints: RouteCollection<LanternRequestContext> {
        RouteCollection(context: LanternRequestContext.self).get(use: search)
    }

    @Sendable func search(_ request: Request, context: LanternRequestContext) async throws -> Response {
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
        return try encoded.answer(places)
    }
}

/// Search answers assembled from each place's JSON, encoded once per place and language: places never change,
/// and encoding ten places per request was a tenth of the service's CPU under load. The bytes are the same as
/// `JSONResponse(Answer(…))` would write (sorted keys); at most two encodings per place are kept (≈ 8 MB).
final class EncodedPlaces: Sendable {
    private let cache = Mutex<[Int: [UInt8]]>([:])

    func answer(_ places: [Place]) throws -> Response {
        var body: [UInt8] = []
        body.reserveCapacity(64 + places.count * 256)
        body += Self.head
        for (offset, place) in places.enumerated() {
            if offset > 0 { body.append(UInt8(ascii: ",")) }
            body += try json(place)
        }
        body += Self.tail
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                        body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// `name` is the only field that differs between languages, so the key is the id and whether it is the English name.
    private func json(_ place: Place) throws -> [UInt8] {
        let key = place.id * 2 + (place.name == place.nameEn ? 0 : 1)
        if let bytes = cache.withLock({ $0[key] }) { return bytes }
        let bytes = Array(try JSONEncoder.lantern.encode(place))
        cache.withLock { $0[key] = bytes }
        return bytes
    }

    // `{"attribution":"…","places":[` … `]}`: the keys in the order `.sortedKeys` writes them.
    private static let head = Array(#"{"attribution":"GeoNames (geonames.org), CC BY 4.0","places":["#.utf8)
    private static let tail = Array("]}".utf8)
}

extension BirthPlace {
    /// Fills latitude, longitude and time zone from the gazetteer when the app sent only a place `id`.
    func resolved(with store: PlaceStore) async throws -> BirthPlace {
        guard let id, latitude == nil, longitude == nil, timeZone == nil else { return self }
        guard let place = try await store.place(id: id) else {
            throw Problem.invalid(field: "place.id", "is not a place of the gazetteer (search /v1/astrology/places)", code: "unknown_place")
        }
        return .init(id: id, latitude: place.latitude, longitude: place.longitude, timeZone: place.timeZone)
    }
}
