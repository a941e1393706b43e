import LanternContracts
import LanternCore

/// The birth data an app sends (Lucky Day's profile, AstroSvitla's purchase and PDF): every field optional so a
/// missing one is named in the 422, not a decoding error.
public struct BirthBody: Decodable, Sendable {
    public var date: String?
    /// `HH:MM`, or null when unknown.
    public var time: String?
    public var place: BirthData.Place?

    /// Names each missing part of `birth` (under `birth.`); astrology checks the values themselves.
    public static func check(_ birth: BirthBody?, _ v: inout FieldValidator) {
        v.check(birth != nil, "birth", "is required: {date, time (or null when unknown), place}")
        v.check(birth == nil || birth?.date != nil, "birth.date", "is required (YYYY-MM-DD)")
        v.check(birth == nil || birth?.place != nil, "birth.place", "is required: {id} from /v1/astrology/places, or {latitude, longitude, timeZone}")
    }

    /// The birth data, or a 422 naming what is missing.
    public static func required(_ birth: BirthBody?) throws -> BirthData {
        var v = FieldValidator()
        check(birth, &v)
        try v.validate()
        guard let birth, let date = birth.date, let place = birth.place else { throw Problem.invalid([]) }
        return BirthData(date: date, time: birth.time, place: place)
    }
}
