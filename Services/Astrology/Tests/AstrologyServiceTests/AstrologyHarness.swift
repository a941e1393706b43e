@testable import AstrologyService
import Ephemeris
import Foundation
import Hummingbird
import HummingbirdTesting
import LanternCore
import LanternTestSupport
import NIOCore
import Testing

/// The service through its router, with a fake identity issuing tokens.
struct AstrologyHarness {
    let client: any TestClientProtocol
    let token: String

    /// The gazetteer `make test` writes (scripts/gazetteer.py); `LANTERN_PLACES_FILE` overrides.
    static var placesFile: String {
        ProcessInfo.processInfo.environment["LANTERN_PLACES_FILE"]
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".lantern/data/places.tsv").path
    }

    /// - Parameter places: load the gazetteer (34,000 places, about a second) for place search.
    static func run(places: Bool = false, _ body: @Sendable (AstrologyHarness) async throws -> Void) async throws {
        let identity = try await FakeIdentity()
        try await identity.serve { url in
            try await TestEnvironment.withDatabase { database in
                let prefix = TestEnvironment.uniquePrefix()
                var variables = ["IDENTITY_URL": url.absoluteString, "LOG_LEVEL": "warning", "OPS_PORT": "0", "DATABASE_URL": database,
                                 "CHART_FINGERPRINT_KEY": "test-chart-fingerprint-key",
                                 "REDIS_URL": try await TestEnvironment.redisURL(for: "astrology", prefix: prefix), "STREAM_PREFIX": prefix]
                if places {
                    #expect(FileManager.default.fileExists(atPath: placesFile), "no gazetteer at \(placesFile): run make test (scripts/gazetteer.py)")
                    variables["PLACES_FILE"] = placesFile
                }
                let app = try await buildAstrologyApplication(try AstrologyConfiguration(settings: .fixed(variables)), logger: TestEnvironment.logger)
                let token = try await identity.token(app: .astrosvitla)
                try await app.test(.router) { client in
                    let harness = AstrologyHarness(client: client, token: token)
                    // The first request fetches the key set; on a loaded machine that can outlast its timeout (503).
                    // Tests are about charts, so they start once tokens are checked.
                    for _ in 0..<50 where try await harness.natal(#"{"date":"2000-01-01","time":"12:00","place":{"latitude":0,"longitude":0,"timeZone":"UTC"}}"#).status == .serviceUnavailable {
                        try await Task.sleep(for: .milliseconds(200))
                    }
                    try await body(harness)
                }
            }
        }
    }

    func natal(_ json: String) async throws -> TestResponse {
        try await client.execute(uri: "/v1/astrology/charts/natal", method: .post,
                                 headers: [.authorization: "Bearer \(token)", .contentType: "application/json"], body: ByteBuffer(string: json))
    }
}

extension TestResponse {
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:] }
    var invalidFields: [String] { (json["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String } }
}
