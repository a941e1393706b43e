import Foundation

/// The gazetteer file scripts/gazetteer.py writes: one place per line, tab-separated — GeoNames id, name,
/// Ukrainian name (may be empty), country code, country, region code, latitude, longitude, time zone, population,
/// other spellings separated by " | ".
public struct GazetteerRecord: Sendable {
    public var place: Place
    /// `name` and the Ukrainian name folded (`PlaceIndex.fold`); `ukKey` is empty without a Ukrainian name.
    public var nameKey: String
    public var ukKey: String
    /// Folded other spellings, distinct and different from `nameKey`.
    public var aliases: [String]

    /// The records of a whole file; malformed lines are skipped.
    public static func parse(_ text: String) -> [GazetteerRecord] {
        var records: [GazetteerRecord] = []
        for line in text.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count >= 11, let id = Int(f[0]), let lat = Double(f[6]), let lon = Double(f[7]), let population = Int(f[9]) else { continue }
            let nameKey = PlaceIndex.fold(f[1])
            var seen: Set<String> = [nameKey, ""]
            let aliases = f[10].components(separatedBy: " | ").map(PlaceIndex.fold).filter { seen.insert($0).inserted }
            records.append(GazetteerRecord(
                place: Place(id: id, name: f[1], nameEn: f[1], nameUk: f[2].isEmpty ? nil : f[2], countryCode: f[3], country: f[4],
                             regionCode: f[5], latitude: lat, longitude: lon, timeZone: f[8], population: population),
                nameKey: nameKey, ukKey: PlaceIndex.fold(f[2]), aliases: aliases))
        }
        return records
    }
}

extension PlaceIndex {
    /// The index of a gazetteer file's records, as the service builds it from its tables (benchmarks use this).
    public convenience init(records: [GazetteerRecord]) {
        self.init(places: records.map { ($0.place, $0.nameKey, $0.ukKey) },
                  aliases: records.flatMap { record in record.aliases.map { (record.place.id, $0) } })
    }
}
