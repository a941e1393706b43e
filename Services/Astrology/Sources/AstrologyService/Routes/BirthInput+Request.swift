import Foundation
import LanternCore

/// The birth data of a request, checked: every field's mistake named at once (422), or the `BirthInput` the
/// domain computes from.
extension BirthInput {
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
            let parts = time.split(separator: ":", omittingEmptySubsequences: false).map(CivilDate.digits)
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

/// A local time that the clocks skipped (daylight saving time began): the 422 the app shows.
extension BirthMoment.Nonexistent: ProblemConvertible {
    var problem: Problem {
        Problem.invalid(field: "time", "\(local) did not exist in \(zone): the clocks jumped forward over it (daylight saving time began)",
                        code: "nonexistent_local_time")
    }
}
