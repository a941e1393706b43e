@testable import AstrologyService
import Foundation
import LanternDatabase
import LanternTestSupport
import PostgresNIO
import Testing

/// The in-memory search against PostgreSQL itself: `pg_trgm`'s `similarity()` and the SQL the index replaced.
@Suite("place index")
struct PlaceIndexTests {
    /// A loaded gazetteer in a fresh database, its index, and a client to ask PostgreSQL the same questions.
    static func withGazetteer(_ body: @Sendable (PlaceStore, PlaceIndex, PostgresClient) async throws -> Void) async throws {
        try await TestEnvironment.withDatabase { url in
            try await TestEnvironment.withPostgres(url) { client in
                let migrations = try Migration.load(from: try #require(AstrologyResources.migrations))
                _ = try await Migrator.migrate(schema: "astrology", migrations: migrations, client: client, logger: TestEnvironment.logger)
                let store = PlaceStore(client: client, logger: TestEnvironment.logger)
                try await store.loadIfEmpty(from: AstrologyHarness.placesFile)
                let index = try #require(try await store.index())
                #expect(index.count == 34_006)
                try await body(store, index, client)
            }
        }
    }

    /// Small, reproducible typos: a dropped, doubled, swapped or replaced letter.
    static func typo(_ text: String, seed: Int) -> String {
        var characters = Array(text)
        guard characters.count > 3 else { return text + "a" }
        let at = 1 + seed % (characters.count - 2)
        switch seed % 4 {
        case 0: characters.remove(at: at)
        case 1: characters.insert(characters[at], at: at)
        case 2: characters.swapAt(at, at + 1)
        default: characters[at] = Character(Unicode.Scalar(UInt8(97 + seed % 26)))
        }
        return String(characters)
    }

    /// Part of the gazetteer file in a temporary file: its first 300 places and 100 more that have a Ukrainian name.
    static func smallGazetteer() throws -> (path: String, records: [GazetteerRecord]) {
        let lines = try String(contentsOfFile: AstrologyHarness.placesFile, encoding: .utf8).split(separator: "\n")
        let ukrainian = lines.dropFirst(300).filter { $0.split(separator: "\t", omittingEmptySubsequences: false).dropFirst(2).first?.isEmpty == false }
        let text = (lines.prefix(300) + ukrainian.prefix(100)).joined(separator: "\n") + "\n"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("places-\(UUID().uuidString).tsv").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return (path, GazetteerRecord.parse(text))
    }

    @Test("trigrams and similarity are pg_trgm's, for Latin, Cyrillic, multi-word and punctuated names; one index build per replica")
    func similarityMatchesPostgres() async throws {
        // A few hundred places are enough here (and cheap): the whole gazetteer is compared in the next test.
        let (path, records) = try Self.smallGazetteer()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await TestEnvironment.withDatabase { url in
            try await TestEnvironment.withPostgres(url) { client in
                let migrations = try Migration.load(from: try #require(AstrologyResources.migrations))
                _ = try await Migrator.migrate(schema: "astrology", migrations: migrations, client: client, logger: TestEnvironment.logger)
                var keys = records.map(\.nameKey) + records.map(\.ukKey).filter { !$0.isEmpty } + records.flatMap(\.aliases).prefix(300)
                keys += ["sankt-peterburg", "n'djamena", "rio de janeiro", "ho chi minh city", "st. john's", "12 de octubre", "a",
                         "львів", "київ-святошин", "ß", "zürich", "  padded  ", "x-y-z"]
                let pairs = keys.enumerated().map { ($0.element, Self.typo($0.element, seed: $0.offset)) }
                    + zip(keys, keys.dropFirst()).map { ($0, $1) }
                let rows = try await client.query("""
                    SELECT a, b, similarity(a, b), coalesce(array_length(show_trgm(a), 1), 0)
                    FROM unnest(\(pairs.map(\.0)), \(pairs.map(\.1))) AS t(a, b)
                    """, logger: TestEnvironment.logger)
                var compared = 0
                for try await (a, b, similarity, count) in rows.decode((String, String, Float, Int).self) {
                    #expect(Trigrams.of(a).count == count, "trigrams of \(a)")
                    #expect(Trigrams.similarity(Trigrams.of(a), Trigrams.of(b)) == similarity, "similarity(\(a), \(b))")
                    compared += 1
                }
                #expect(compared == pairs.count && compared > 1_000)

                // A replica's concurrent first searches share one build; before any place is loaded there is none.
                let store = PlaceStore(client: client, logger: TestEnvironment.logger)
                #expect(try await store.index() == nil)
                try await store.loadIfEmpty(from: path)
                let fresh = PlaceStore(client: client, logger: TestEnvironment.logger)
                async let first = fresh.index()
                async let second = fresh.index()
                let (a, b) = try await (first, second)
                #expect(a?.count == records.count && records.count == 400 && a === b)
                #expect(try await fresh.index() === a)
                #expect(try await store.index()?.count == records.count, "a replica that found no places builds its index once they are loaded")
            }
        }
    }

    @Test("ranks like the SQL it replaced: prefixes (exact name, then population) and pg_trgm similarity stages")
    func ranksLikePostgres() async throws {
        try await Self.withGazetteer { store, index, client in
            func ids(_ rows: PostgresRowSequence) async throws -> [Int] {
                var ids: [Int] = []
                for try await id in rows.decode(Int.self) { ids.append(id) }
                return ids
            }
            for text in ["k", "ky", "kyiv", "lon", "london", "sao p", "new y", "san", "ber", "льв", "київ", "х", "par", "paris", "z"] {
                let key = PlaceIndex.fold(text)
                let expected = try await ids(client.query("""
                    SELECT id FROM astrology.places WHERE name_key LIKE \(key + "%") OR uk_key LIKE \(key + "%")
                    ORDER BY (name_key = \(key) OR uk_key = \(key)) DESC, population DESC, id LIMIT 10
                    """, logger: TestEnvironment.logger))
                #expect(index.search(key, limit: 10).map(\.id) == expected, "prefix \(text)")
            }
            // Hand-picked typos and other spellings, and typos of 8 places spread over the table (multi-word names too).
            var typos = ["kiev", "lvov", "kharkiw", "zaporizhzhia", "oddesa", "mykolajiw", "londn", "pariss", "tokio", "warszawa",
                         "kijów", "dnepropetrovsk", "львов", "киев", "muenchen", "bejing", "mosow", "neu york"]
            for (seed, name) in index.places.enumerated().filter({ $0.offset % 4_250 == 7 }) { typos.append(Self.typo(PlaceIndex.fold(name.name), seed: seed)) }
            var compared = 0
            for text in typos {
                let key = PlaceIndex.fold(text)
                let prefixed = try await ids(client.query("""
                    SELECT id FROM astrology.places WHERE name_key LIKE \(key + "%") OR uk_key LIKE \(key + "%") LIMIT 1
                    """, logger: TestEnvironment.logger))
                guard prefixed.isEmpty else { continue }  // a prefix answer: that stage is compared above
                let expected = try await ids(client.query("""
                    WITH candidates (id, score) AS (
                        SELECT id, similarity(name_key, \(key)) FROM astrology.places WHERE name_key % \(key)
                        UNION ALL SELECT id, similarity(uk_key, \(key)) FROM astrology.places WHERE uk_key % \(key)
                        UNION ALL SELECT place_id, 0.9 * similarity(alias_key, \(key)) FROM astrology.place_aliases WHERE alias_key % \(key)
                    ), best AS (SELECT id, max(score) AS score FROM candidates GROUP BY id)
                    SELECT p.id FROM best JOIN astrology.places p USING (id)
                    ORDER BY round(best.score::numeric, 1) DESC, p.population DESC, p.id LIMIT 10
                    """, logger: TestEnvironment.logger))
                compared += 1
                #expect(index.search(key, limit: 10).map(\.id) == expected, "similar to \(text)")
            }
            #expect(compared >= 20, "most typos need the similarity stage")
            #expect(index.search("xqzzqx", limit: 10).isEmpty)
            #expect(index.search("", limit: 10).isEmpty)
            #expect(try await store.place(id: 703448)?.name == "Kyiv")
        }
    }
}
