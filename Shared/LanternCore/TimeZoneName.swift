import Foundation

/// IANA time-zone names as every service accepts them: a name of the tz database on this machine, canonical or a
/// backward link alike (`Asia/Kolkata` and `Asia/Calcutta`, `Europe/Kyiv` and `Europe/Kiev`, `US/Eastern`,
/// `Etc/GMT+12`, `UTC`, `EST`). Apps and the gazetteer send either spelling.
///
/// Never `TimeZone.knownTimeZoneIdentifiers`: on Linux it lists ICU's canonical names only and would refuse all
/// of India. `TimeZone(identifier:)` resolves every tz name, and also ICU's custom offsets (`GMT+05:00`), which are
/// not tz names and are refused here.
public enum TimeZoneName {
    /// The zone `name` names, or nil when it is not a tz database name.
    public static func zone(_ name: String) -> TimeZone? {
        guard (1...64).contains(name.utf8.count),
              name.isASCIIIdentifier(allowing: "/_-+")
        else { return nil }
        // tz has `GMT+0` and `GMT-0` (links to Etc/GMT); any other `GMT±…` is ICU's custom syntax (tz spells
        // fixed offsets `Etc/GMT±n`).
        if name.hasPrefix("GMT+") || name.hasPrefix("GMT-"), name != "GMT+0", name != "GMT-0" { return nil }
        return TimeZone(identifier: name)
    }

    public static func isValid(_ name: String) -> Bool { zone(name) != nil }
}
