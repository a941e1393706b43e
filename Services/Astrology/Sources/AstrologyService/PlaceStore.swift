import Foundation
import LanternCore
import Logging
import PostgresNIO

/// A city of the gazetteer.
public struct Place: Codable, Sendable, Equatable {
    public var id: Int
    /// The name in the requested language (Ukrainian when asked for and known, else the GeoNames name).
    public var name: String
    public var nameEn: String
    public var nameUk: String?
    public var countryCode: String
    public var country: String
    /// GeoNames first-level administrative code (e.g. `12` for Kyiv city); names of regions are not in the data.
    public var regionCode: String
    public var latitude: Double
    public var longitude: Double
    public var timeZone: String
    public var population: Int
}

/// The offline place gazetteer in `astrology.places`: loaded once from the TSV that scripts/gazetteer.py writes,
/// searched with `pg_trgm` (prefix, trigram similarity on names, word similarity on alternate names).
struct PlaceStore: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// Lower case without diacritics, the form both the stored keys and the queries take.
    static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: Locale(identifier: "en_US_POSIX"))
            .lowercased().trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func count() async throws -> Int {
        let rows = try await client.query("SELECT count(*)::int FROM astrology.places", logger: logger)
        for try await n in rows.decode(Int.self) { return n }
        return 0
    }

    /// Loads the gazetteer when the table is empty (first start); returns how many places were loaded.
    @discardableResult
    func loadIfEmpty(from path: String) async throws -> Int {
        guard try await count() == 0 else { return 0 }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            logger.warning("place gazetteer not found; place search answers 503 until it is loaded", metadata: ["file": "\(path)"])
            return 0
        }
        var columns = (ids: [Int](), names: [String](), uk: [String](), cc: [String](), countries: [String](), regions: [String](),
                       lat: [Double](), lon: [Double](), zones: [String](), population: [Int](), nameKeys: [String](), ukKeys: [String](), aliases: [String]())
        var loaded = 0
        func flush() async throws {
            guard !columns.ids.isEmpty else { return }
            try await client.query("""
                INSERT INTO astrology.places (id, name, name_uk, country_code, country_name, region_code, latitude, longitude, time_zone,
                                              population, name_key, uk_key, aliases)
                SELECT id, name, NULLIF(uk, ''), cc, country, region, lat, lon, zone, population, name_key, uk_key, aliases
                FROM unnest(\(columns.ids), \(columns.names), \(columns.uk), \(columns.cc), \(columns.countries), \(columns.regions),
                            \(columns.lat), \(columns.lon), \(columns.zones), \(columns.population), \(columns.nameKeys), \(columns.ukKeys),
                            \(columns.aliases)) AS t(id, name, uk, cc, country, region, lat, lon, zone, population, name_key, uk_key, aliases)
                ON CONFLICT (id) DO NOTHING
                """, logger: logger)
            loaded += columns.ids.count
            columns = ([], [], [], [], [], [], [], [], [], [], [], [], [])
        }
        for line in text.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count >= 11, let id = Int(f[0]), let lat = Double(f[6]), let lon = Double(f[7]), let population = Int(f[9]) else { continue }
            columns.ids.append(id); columns.names.append(f[1]); columns.uk.append(f[2])
            columns.cc.append(f[3]); columns.countries.append(f[4]); columns.regions.append(f[5])
            columns.lat.append(lat); columns.lon.append(lon); columns.zones.append(f[8]); columns.population.append(population)
            columns.nameKeys.append(Self.fold(f[1])); columns.ukKeys.append(Self.fold(f[2]))
            columns.aliases.append(Self.fold(f[10]))
            if columns.ids.count == 2_000 { try await flush() }
        }
        try await flush()
        for statement in Self.indexes { try await client.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
        logger.info("place gazetteer loaded", metadata: ["places": "\(loaded)"])
        return loaded
    }

    static let indexes = [
        "CREATE INDEX IF NOT EXISTS places_name_trgm ON astrology.places USING gin (name_key gin_trgm_ops)",
        "CREATE INDEX IF NOT EXISTS places_uk_trgm ON astrology.places USING gin (uk_key gin_trgm_ops)",
        "CREATE INDEX IF NOT EXISTS places_aliases_trgm ON astrology.places USING gin (aliases gin_trgm_ops)",
        "CREATE INDEX IF NOT EXISTS places_name_prefix ON astrology.places (name_key text_pattern_ops)",
        "CREATE INDEX IF NOT EXISTS places_uk_prefix ON astrology.places (uk_key text_pattern_ops)",
        "ANALYZE astrology.places",
    ]

    /// Best matches for what the user typed: exact names first, then prefixes by population (autocomplete),
    /// then by similarity in steps of 0.1 (typos; other spellings count a little less than the name) and
    /// population within a step, so a big city beats a district whose alias happens to match.
    func search(_ query: String, ukrainian: Bool, limit: Int) async throws -> [Place] {
        let key = Self.fold(query)
        let escaped = key.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
        let prefix = escaped + "%"
        let rows = try await client.query("""
            SELECT id, name, name_uk, country_code, country_name, region_code, latitude, longitude, time_zone, population
            FROM astrology.places
            WHERE name_key LIKE \(prefix) OR uk_key LIKE \(prefix) OR name_key % \(key) OR uk_key % \(key) OR \(key) <% aliases
            ORDER BY (name_key = \(key) OR uk_key = \(key)) DESC, (name_key LIKE \(prefix) OR uk_key LIKE \(prefix)) DESC,
                     CASE WHEN name_key LIKE \(prefix) OR uk_key LIKE \(prefix) THEN population END DESC NULLS LAST,
                     round(GREATEST(similarity(name_key, \(key)), similarity(uk_key, \(key)), 0.8 * word_similarity(\(key), aliases))::numeric, 1) DESC,
                     population DESC
            LIMIT \(limit)
            """, logger: logger)
        var places: [Place] = []
        for try await (id, name, uk, cc, country, region, lat, lon, zone, population)
            in rows.decode((Int, String, String?, String, String, String, Double, Double, String, Int).self) {
            places.append(Place(id: id, name: ukrainian ? (uk ?? name) : name, nameEn: name, nameUk: uk, countryCode: cc, country: country,
                                regionCode: region, latitude: lat, longitude: lon, timeZone: zone, population: population))
        }
        return places
    }

    func place(id: Int) async throws -> Place? {
        let rows = try await client.query("""
            SELECT id, name, name_uk, country_code, country_name, region_code, latitude, longitude, time_zone, population
            FROM astrology.places WHERE id = \(id)
            """, logger: logger)
        for try await (id, name, uk, cc, country, region, lat, lon, zone, population)
            in rows.decode((Int, String, String?, String, String, String, Double, Double, String, Int).self) {
            return Place(id: id, name: name, nameEn: name, nameUk: uk, countryCode: cc, country: country, regionCode: region,
                         latitude: lat, longitude: lon, timeZone: zone, population: population)
        }
        return nil
    }
}
