import Foundation
import LanternCore
import Logging
import NIOPosix
import PostgresNIO
import Synchronization

/// The in-memory index, built once per process and shared between copies of the store.
final class PlaceIndexCell: Sendable {
    private let state = Mutex<(index: PlaceIndex?, building: Task<PlaceIndex?, any Error>?)>((nil, nil))

    var index: PlaceIndex? { state.withLock { $0.index } }

    /// The index, building it with `build` unless it is built or being built (concurrent callers share one build).
    func index(building build: @escaping @Sendable () async throws -> PlaceIndex?) async throws -> PlaceIndex? {
        let (ready, task): (PlaceIndex?, Task<PlaceIndex?, any Error>?) = state.withLock { state in
            if let index = state.index { return (index, nil) }
            if let building = state.building { return (nil, building) }
            let task = Task { try await build() }
            state.building = task
            return (nil, task)
        }
        if let ready { return ready }
        guard let task else { return nil }
        do {
            let index = try await task.value
            state.withLock { state in
                if let index { state.index = index }
                state.building = nil
            }
            return index
        } catch {
            state.withLock { $0.building = nil }
            throw error
        }
    }
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

/// The offline place gazetteer: stored in `astrology.places` and `place_aliases`, loaded there once from the TSV
/// that scripts/gazetteer.py writes, and searched in memory (`PlaceIndex`).
struct PlaceStore: Sendable {
    let client: PostgresClient
    let logger: Logger
    private let cell = PlaceIndexCell()

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The searchable gazetteer, or nil while the table is empty (no `PLACES_FILE` yet). Built from the table on
    /// first use (the service builds it before it starts listening) and kept: the gazetteer never changes.
    func index() async throws -> PlaceIndex? {
        if let index = cell.index { return index }
        return try await cell.index { [self] in try await readIndex() }
    }

    private func hasPlaces() async throws -> Bool {
        let rows = try await client.query("SELECT EXISTS (SELECT 1 FROM astrology.places)", logger: logger)
        for try await exists in rows.decode(Bool.self) { return exists }
        return false
    }

    private func readIndex() async throws -> PlaceIndex? {
        guard try await hasPlaces() else { return nil }
        let started = ContinuousClock.now
        var rows: [(place: Place, nameKey: String, ukKey: String)] = []
        var aliases: [(id: Int, key: String)] = []
        rows.reserveCapacity(40_000)
        aliases.reserveCapacity(250_000)
        // One row per place, its other spellings joined with tabs (which the tab-separated source cannot contain):
        // 34,000 rows read in less than half the time of 230,000.
        let placeRows = try await client.query("""
            SELECT p.id, p.name, p.name_uk, p.country_code, p.country_name, p.region_code, p.latitude, p.longitude, p.time_zone,
                   p.population, p.name_key, p.uk_key,
                   coalesce((SELECT string_agg(a.alias_key, E'\t') FROM astrology.place_aliases a WHERE a.place_id = p.id), '')
            FROM astrology.places p
            """, logger: logger)
        for try await (id, name, uk, cc, country, region, lat, lon, zone, population, nameKey, ukKey, others)
            in placeRows.decode((Int, String, String?, String, String, String, Double, Double, String, Int, String, String, String).self) {
            rows.append((Place(id: id, name: name, nameEn: name, nameUk: uk, countryCode: cc, country: country, regionCode: region,
                               latitude: lat, longitude: lon, timeZone: zone, population: population), nameKey, ukKey))
            for alias in others.split(separator: "\t") { aliases.append((id, String(alias))) }
        }
        // Seconds of CPU (sorting and keying 34,000 places and their aliases): on NIO's blocking pool, not on the
        // few threads every request's task shares.
        let (places, others) = (rows, aliases)
        let index = try await NIOThreadPool.singleton.runIfActive { PlaceIndex(places: places, aliases: others) }
        logger.info("place index built", metadata: ["places": "\(index.count)", "aliases": "\(aliases.count)",
                                                    "duration": "\(ContinuousClock.now - started)"])
        return index
    }

    func count() async throws -> Int {
        let rows = try await client.query("SELECT count(*)::int FROM astrology.places", logger: logger)
        for try await n in rows.decode(Int.self) { return n }
        return 0
    }

    /// Loads the gazetteer when the table is empty (first start); returns how many places were loaded.
    @discardableResult
    func loadIfEmpty(from path: String) async throws -> Int {
        guard try await !hasPlaces() else { return 0 }
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
            let records = try await NIOThreadPool.singleton.runIfActive { GazetteerRecord.parse(text) }
            for record in records {
                let p = record.place
                columns.ids.append(p.id); columns.names.append(p.name); columns.uk.append(p.nameUk ?? "")
                columns.cc.append(p.countryCode); columns.countries.append(p.country); columns.regions.append(p.regionCode)
                columns.lat.append(p.latitude); columns.lon.append(p.longitude); columns.zones.append(p.timeZone)
                columns.population.append(p.population); columns.nameKeys.append(record.nameKey); columns.ukKeys.append(record.ukKey)
                for alias in record.aliases {
                    columns.aliasIDs.append(p.id)
                    columns.aliases.append(alias)
                }
                if columns.ids.count == 2_000 { try await flush() }
            }
            try await flush()
            try await connection.query("ANALYZE astrology.places", logger: logger)
            return loaded
        }
        if loaded > 0 { logger.info("place gazetteer loaded", metadata: ["places": "\(loaded)"]) }
        return loaded
    }

    /// Best matches for what the user typed, in the requested language (see `PlaceIndex.search`).
    func search(_ query: String, ukrainian: Bool, limit: Int) async throws -> [Place]? {
        guard let index = try await index() else { return nil }
        return index.search(PlaceIndex.fold(query), limit: limit).map { place in
            var place = place
            if ukrainian, let uk = place.nameUk { place.name = uk }
            return place
        }
    }

    func place(id: Int) async throws -> Place? {
        try await index()?.place(id: id)
    }
}
