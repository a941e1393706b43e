import Foundation
import LanternCore

/// Where a birth took place, as the app sends it: a gazetteer id (resolved by the route), or coordinates and a zone.
struct BirthPlace: Decodable, Sendable {
    /// A gazetteer id (from /v1/astrology/places) instead of the three fields below.
    var id: Int?
    var latitude: Double?
    var longitude: Double?
    var timeZone: String?
}

/// A point on Earth in degrees.
struct GeoPoint: Sendable { var latitude: Double; var longitude: Double }

/// A note the answer carries about how it was computed (time unknown, an ambiguous local time, …).
struct ChartWarning: Encodable, Sendable {
    var code: String
    var message: String
}

/// Birth data once every field checked out: what a chart or a Ba Zi reading is computed from.
struct BirthInput: Sendable {
    var moment: BirthMoment
    var place: GeoPoint
    var fold: BirthMoment.Fold?
    var orbs: [AspectType: Double]
}
