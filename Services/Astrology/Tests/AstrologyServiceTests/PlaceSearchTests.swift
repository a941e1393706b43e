@testable import AstrologyService
import Foundation
import HummingbirdTesting
import LanternCore
import LanternDatabase
import LanternTestSupport
import NIOCore
import Testing

@Suite("place search")
struct PlaceSearchTests {
    @Test("autocomplete over the GeoNames gazetteer: prefixes, other spellings, typos, Ukrainian names; a chart by place id")
    func search() async throws {
        try await AstrologyHarness.run(places: true) { h in
            func search(_ query: String) async throws -> [[String: Any]] {
                let response = try await h.client.execute(uri: "/v1/astrology/places?\(query)", method: .get, headers: [.authorization: "Bearer \(h.token)"])
                #expect(response.status == .ok, "\(query): \(String(buffer: response.body))")
                return response.json["places"] as? [[String: Any]] ?? []
            }
            let kyiv = try await search("q=Kyiv")
            #expect(kyiv.first?["name"] as? String == "Kyiv" && kyiv.first?["timeZone"] as? String == "Europe/Kyiv" && kyiv.first?["country"] as? String == "Ukraine")
            #expect((kyiv.first?["population"] as? Int ?? 0) > 2_000_000)
            #expect(try await search("q=Ky&limit=5").contains { $0["name"] as? String == "Kyiv" }, "prefix, ranked by population")
            #expect(try await search("q=Kiev").first?["name"] as? String == "Kyiv", "an alternate spelling")
            #expect(try await search("q=Zaporizhzhia").first?["name"] as? String == "Zaporizhzhya", "another spelling")
            #expect(try await search("q=Kharkiw").first?["name"] as? String == "Kharkiv", "a typo")
            #expect(try await search("q=Lvov").first?["name"] as? String == "Lviv")
            let ukrainian = try await search("q=%D0%9B%D1%8C%D0%B2%D1%96%D0%B2&lang=uk")  // Львів
            #expect(ukrainian.first?["name"] as? String == "Львів" && ukrainian.first?["nameEn"] as? String == "Lviv")
            #expect(try await search("q=Kyiv&lang=uk").first?["name"] as? String == "Київ")
            #expect(try await search("q=S%C3%A3o%20Paulo").first?["countryCode"] as? String == "BR", "diacritics")
            #expect(try await search("q=xqzzqx").isEmpty)
            #expect(try await search("q=London&limit=3").count <= 3)

            // Answers are assembled from cached per-place JSON: byte for byte what encoding the whole answer gives,
            // in both languages, asked twice (the second time from the cache).
            struct Decoded: Decodable { var places: [Place] }
            for query in ["q=Lon", "q=Kyiv&lang=uk", "q=Lon&lang=uk", "q=Kiev", "q=xqzzqx", "q=Lon"] {
                let response = try await h.client.execute(uri: "/v1/astrology/places?\(query)", method: .get, headers: [.authorization: "Bearer \(h.token)"])
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                let places = try JSONDecoder().decode(Decoded.self, from: Data(buffer: response.body)).places
                let canonical = try JSONEncoder.lantern.encode(PlacesController.Answer(places: places))
                #expect(Data(buffer: response.body) == canonical, "\(query)")
            }

            for (query, field) in [("q=", "q"), ("q=Kyiv&lang=fr", "lang"), ("q=Kyiv&limit=0", "limit"), ("q=Kyiv&limit=abc", "limit")] {
                let bad = try await h.client.execute(uri: "/v1/astrology/places?\(query)", method: .get, headers: [.authorization: "Bearer \(h.token)"])
                #expect(bad.status == .unprocessableContent && bad.invalidFields == [field], "\(query)")
            }

            let id = try #require(kyiv.first?["id"] as? Int)
            let chart = try await h.natal(#"{"date":"1990-04-15","time":"14:30","place":{"id":\#(id)}}"#)
            #expect(chart.status == .ok)
            #expect((chart.json["birth"] as? [String: Any])?["timeZone"] as? String == "Europe/Kyiv")
            let unknown = try await h.natal(#"{"date":"1990-04-15","time":"14:30","place":{"id":1}}"#)
            #expect(unknown.status == .unprocessableContent && unknown.invalidFields == ["place.id"])
        }
    }

    @Test("without a gazetteer, search is a clear 503 and charts still work with coordinates")
    func noGazetteer() async throws {
        try await AstrologyHarness.run { h in
            let response = try await h.client.execute(uri: "/v1/astrology/places?q=Kyiv", method: .get, headers: [.authorization: "Bearer \(h.token)"])
            #expect(response.status == .serviceUnavailable && response.json["code"] as? String == "places_unavailable")
        }
    }
}

@Suite("gazetteer loading")
struct GazetteerLoadingTests {
    @Test("two replicas starting together load the gazetteer once, completely")
    func concurrentLoad() async throws {
        try await TestEnvironment.withDatabase { url in
            try await TestEnvironment.withPostgres(url) { client in
                let migrations = try Migration.load(from: try #require(AstrologyResources.migrations))
                _ = try await Migrator.migrate(schema: "astrology", migrations: migrations, client: client, logger: TestEnvironment.logger)
                let store = PlaceStore(client: client, logger: TestEnvironment.logger)
                async let first = store.loadIfEmpty(from: AstrologyHarness.placesFile)
                async let second = PlaceStore(client: client, logger: TestEnvironment.logger).loadIfEmpty(from: AstrologyHarness.placesFile)
                let loaded = try await [first, second]
                #expect(loaded.sorted() == [0, 34_006])
                #expect(try await store.count() == 34_006)
                #expect(try await store.loadIfEmpty(from: AstrologyHarness.placesFile) == 0)
            }
        }
    }
}
