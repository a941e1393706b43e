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

    /// Checks every field, adding mistakes to `v` (which may already hold the caller's own), and throws them all
    /// at once, each naming its field.
    static func validate(date: String?, time: String?, place: BirthPlace?, fold: String?, orbs: [String: Double]?,
                         _ v: inout FieldValidator) throws -> BirthInput {
        var ymd: CivilDate?
        if let date = date {
            ymd = CivilDate(parsing: date)
            v.check(ymd != nil, "date", "must be a real date YYYY-MM-DD between 1900-01-01 and 2100-12-31")
        } else {
            v.fail("date", "is required (YYYY-MM-DD)")
        }
        var hm: (Int, Int)?
        if let time = time {
            let parts = time.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
            if time.count == 5, parts.count == 2, let h = parts[0], let m = parts[1], (0...23).contains(h), (0...59).contains(m) {
                hm = (h, m)
            } else {
                v.fail("time", "must be HH:MM from 00:00 to 23:59, or null when the birth time is unknown")
            }
        }
        var zone: TimeZone?
        if let place {
            if let lat = place.latitude { v.check(lat.isFinite && (-90...90).contains(lat), "place.latitude", "must be between -90 and 90 degrees") } else {
                v.fail("place.latitude", "is required")
            }
            if let lon = place.longitude { v.check(lon.isFinite && (-180...180).contains(lon), "place.longitude", "must be between -180 and 180 degrees") } else {
                v.fail("place.longitude", "is required")
            }
            if let id = place.timeZone {
                zone = TimeZoneName.zone(id)
                v.check(zone != nil, "place.timeZone", "must be an IANA time zone such as Europe/Kyiv")
            } else {
                v.fail("place.timeZone", "is required (an IANA time zone such as Europe/Kyiv)")
            }
        } else {
            v.fail("place", "is required: a gazetteer id, or latitude, longitude and timeZone")
        }
        var foldChoice: BirthMoment.Fold?
        if let text = fold {
            foldChoice = BirthMoment.Fold(rawValue: text)
            v.check(foldChoice != nil, "fold", "must be earlier or later")
        }
        var orbValues: [AspectType: Double] = [:]
        for (name, value) in orbs ?? [:] {
            guard let type = AspectType(rawValue: name) else {
                v.fail("orbs.\(name)", "is not an aspect; use \(AspectType.allCases.map(\.rawValue).joined(separator: ", "))")
                continue
            }
            v.check(value.isFinite && (0...15).contains(value), "orbs.\(name)", "must be between 0 and 15 degrees")
            orbValues[type] = value
        }
        try v.validate()
        guard let ymd, let zone, let lat = place?.latitude, let lon = place?.longitude else {
            throw Problem.badRequest("incomplete request")
        }
        let moment = BirthMoment(year: ymd.year, month: ymd.month, day: ymd.day, hour: hm?.0 ?? 12, minute: hm?.1 ?? 0, timeKnown: hm != nil, timeZone: zone)
        return BirthInput(moment: moment, place: GeoPoint(latitude: lat, longitude: lon), fold: foldChoice, orbs: orbValues)
    }
}
