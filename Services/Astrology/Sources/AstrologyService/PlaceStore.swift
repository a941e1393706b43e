import Foundation
import LanternCore
import Logging
import PostgresNIO
import Synchronization

/// Shared between copies of the store.
final class LoadedFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}

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
/// searched by prefix and with `pg_trgm` similarity on names and alternate names.
struct PlaceStore: Sendable {
    let client: PostgresClient
    let logger: Logger
    /// Set once the table is known to hold places (it never empties again), so searches skip the check.
    private let loaded = LoadedFlag()

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    func isLoaded() async throws -> Bool {
        if loaded.isSet { return true }
        let rows = try await client.query("SELECT EXISTS (SELECT 1 FROM astrology.places)", logger: logger)
        for try await exists in rows.decode(Bool.self) where exists {
            loaded.set()
            return true
        }
        return false
    }

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
        guard try await !isLoaded() else { return 0 }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            logger.warning("place gazetteer not found; place search answers 503 until it is loaded", metadata: ["file": "\(path)"])
            return 0
        }
        // One transaction under an advisory lock: replicas starting together load it once, and a crash halfway
        // leaves an empty table (loaded again at the next start), never half a gazetteer.
        let loaded: Int = try await client.transaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext('lantern.astrology.places'))", logger: logger)
            let rows = try await connection.query("SELECT EXISTS (SELECT 1 FROM astrology.places)", logger: logger)
            for try await exists in rows.decode(Bool.self) where exists { return 0 }
            var columns = (ids: [Int](), names: [String](), uk: [String](), cc: [String](), countries: [String](), regions: [String](),
                           lat: [Double](), lon: [Double](), zones: [String](), population: [Int](), nameKeys: [String](), ukKeys: [String](),
                           aliasIDs: [Int](), aliases: [String]())
            var loaded = 0
            func flush() async throws {
                guard !columns.ids.isEmpty else { return }
                try await connection.query("""
                    INSERT INTO astrology.places (id, name, name_uk, country_code, country_name, region_code, latitude, longitude, time_zone,
                                                  population, name_key, uk_key)
                    SELECT id, name, NULLIF(uk, ''), cc, country, region, lat, lon, zone, population, name_key, uk_key
                    FROM unnest(\(columns.ids), \(columns.names), \(columns.uk), \(columns.cc), \(columns.countries), \(columns.regions),
                                \(columns.lat), \(columns.lon), \(columns.zones), \(columns.population), \(columns.nameKeys), \(columns.ukKeys))
                         AS t(id, name, uk, cc, country, region, lat, lon, zone, population, name_key, uk_key)
                    ON CONFLICT (id) DO NOTHING
                    """, logger: logger)
                try await connection.query("""
                    INSERT INTO astrology.place_aliases (place_id, alias_key) SELECT * FROM unnest(\(columns.aliasIDs), \(columns.aliases))
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
                loaded += columns.ids.count
                columns = ([], [], [], [], [], [], [], [], [], [], [], [], [], [])
            }
            for line in text.split(separator: "\n") {
                let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                guard f.count >= 11, let id = Int(f[0]), let lat = Double(f[6]), let lon = Double(f[7]), let population = Int(f[9]) else { continue }
                let nameKey = Self.fold(f[1])
                columns.ids.append(id); columns.names.append(f[1]); columns.uk.append(f[2])
                columns.cc.append(f[3]); columns.countries.append(f[4]); columns.regions.append(f[5])
                columns.lat.append(lat); columns.lon.append(lon); columns.zones.append(f[8]); columns.population.append(population)
                columns.nameKeys.append(nameKey); columns.ukKeys.append(Self.fold(f[2]))
                for alias in Set(f[10].components(separatedBy: " | ").map(Self.fold)) where !alias.isEmpty && alias != nameKey {
                    columns.aliasIDs.append(id)
                    columns.aliases.append(alias)
                }
                if columns.ids.count == 2_000 { try await flush() }
            }
            try await flush()
            for statement in Self.indexes { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
            return loaded
        }
        if loaded > 0 { logger.info("place gazetteer loaded", metadata: ["places": "\(loaded)"]) }
        return loaded
    }

    static let indexes = [
        "CREATE INDEX IF NOT EXISTS places_name_trgm ON astrology.places USING gin (name_key gin_trgm_ops)",
        "CREATE INDEX IF NOT EXISTS places_uk_trgm ON astrology.places USING gin (uk_key gin_trgm_ops)",
        "CREATE INDEX IF NOT EXISTS place_aliases_trgm ON astrology.place_aliases USING gin (alias_key gin_trgm_ops)",
        "CREATE INDEX IF NOT EXISTS places_name_prefix ON astrology.places (name_key text_pattern_ops)",
        "CREATE INDEX IF NOT EXISTS places_uk_prefix ON astrology.places (uk_key text_pattern_ops)",
        "ANALYZE astrology.places",
        "ANALYZE astrology.place_aliases",
    ]

    /// Best matches for what the user typed. Autocomplete first: names starting with the text, biggest first
    /// (B-tree prefix scans, well under a millisecond). Only when no name starts with it, and the text has at
    /// least 3 characters, similar names and other spellings are searched (trigram similarity: typos, Kiev → Kyiv),
    /// ranked by similarity in steps of 0.1 and population within a step.
    func search(_ query: String, ukrainian: Bool, limit: Int) async throws -> [Place] {
        let key = Self.fold(query)
        let escaped = key.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
        let prefix = escaped + "%"
        var places = try await decode(client.query("""
            SELECT id, name, name_uk, country_code, country_name, region_code, latitude, longitude, time_zone, population
            FROM astrology.places WHERE name_key LIKE \(prefix) OR uk_key LIKE \(prefix)
            ORDER BY (name_key = \(key) OR uk_key = \(key)) DESC, population DESC LIMIT \(limit)
            """, logger: logger), ukrainian: ukrainian)
        // Names that start with the text are what autocomplete shows; only when there are none (a typo, another
        // spelling) is the slower similarity search worth its cost.
        guard places.isEmpty, key.count >= 3 else { return places }
        let seen = places.map(\.id)
        let similar = try await decode(client.query("""
            WITH candidates (id, score) AS (
                SELECT id, similarity(name_key, \(key)) FROM astrology.places WHERE name_key % \(key)
                UNION ALL SELECT id, similarity(uk_key, \(key)) FROM astrology.places WHERE uk_key % \(key)
                UNION ALL SELECT place_id, 0.9 * similarity(alias_key, \(key)) FROM astrology.place_aliases WHERE alias_key % \(key)
            ), best AS (SELECT id, max(score) AS score FROM candidates WHERE id <> ALL(\(seen)) GROUP BY id)
            SELECT p.id, p.name, p.name_uk, p.country_code, p.country_name, p.region_code, p.latitude, p.longitude, p.time_zone, p.population
            FROM best JOIN astrology.places p USING (id)
            ORDER BY round(best.score::numeric, 1) DESC, p.population DESC LIMIT \(limit - places.count)
            """, logger: logger), ukrainian: ukrainian)
        places += similar
        return places
    }

    private func decode(_ rows: PostgresRowSequence, ukrainian: Bool) async throws -> [Place] {
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
