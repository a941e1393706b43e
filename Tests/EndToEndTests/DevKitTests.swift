import AsyncHTTPClient
import DevAppStore
import DevIdentity
import Foundation
import LanternHTTP
import NIOCore
import LanternTestSupport
import Testing

extension EndToEnd {
    /// `make demo` and `make token` are what a newcomer runs first: they run here against the stack as `make up`
    /// configures it (development, the development identity provider), so they cannot rot unnoticed.
    @Suite("The development kit: make demo and make token", .serialized)
    struct DevKitTests {
        static let imfFixdate: DateFormatter = {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            return formatter
        }()

        @Test("make demo walks Pairly, AstroSvitla (a report bought from the development App Store, its PDF, its refund), Lucky Day (tomorrow's cookie by time travel), RoastMeLater (a roast, a check-in, the streak and the next badge) and Symbi (a week, then a month and its evolved ghost) through the gateway, twice in a row; make token signs in with Google and Apple")
        func demo() async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lantern-devkit-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let provider = DevIdentityProvider(key: try DevIdentityProvider.key(file: folder.appendingPathComponent("key.pem")))
            let collector = FakeOTLPCollector()
            try await LoopbackServer.run(router: collector.router()) { collectorPort in
                try await LoopbackServer.run(router: provider.router()) { port in
                    // Access lines and deliveries are logged at info; the gateway and media also export their spans to
                    // an OTLP/HTTP collector (the others show that exporting is off by default).
                    // The whole stack in development, as `make up` runs it (time travel included).
                    let info = ["LOG_LEVEL": "info", "LANTERN_ENVIRONMENT": "development"]
                    let exporting = info.merging(["OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
                                                  "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:\(collectorPort)", "OTEL_BSP_SCHEDULE_DELAY": "200"]) { $1 }
                    let identity = ["LANTERN_ENVIRONMENT": "development", "LOG_LEVEL": "info",
                                    "GOOGLE_CLIENT_IDS": DevIdentityProvider.googleClientID, "GOOGLE_JWKS_URL": "http://127.0.0.1:\(port)/google/jwks.json",
                                    "APPLE_CLIENT_IDS": DevIdentityProvider.appleClientID, "APPLE_JWKS_URL": "http://127.0.0.1:\(port)/apple/jwks.json"]
                    // Every executable of the list in development (one left out would not follow the travelled clock);
                    // some with more.
                    var environments = Dictionary(uniqueKeysWithValues: try ServiceList.load().map { ($0.name, ["LANTERN_ENVIRONMENT": "development"]) })
                    // content trusts the development App Store signer that make up makes (and dev.py signs with).
                    let appStore = folder.appendingPathComponent("dev/appstore")
                    _ = try DevAppStoreSigner(folder: appStore)
                    let content = ["LANTERN_ENVIRONMENT": "development", "APPSTORE_ROOT_CERTIFICATES": DevAppStoreSigner.rootFile(in: appStore).path,
                                   "APPSTORE_ENVIRONMENTS": "Sandbox,Xcode"]
                    // As make up sets it (scripts/up.sh): a developer's stack signs every device account in from one address.
                    let gateway = exporting.merging(["RATE_LIMIT_DEVICE_SIGNIN_PER_DAY": "100000"]) { $1 }
                    environments.merge(["identity": identity, "gateway": gateway, "media": exporting, "push-worker": info, "content": content]) { $1 }
                    try await Stack.run(places: true, environment: environments) { stack in
                        let environment = ProcessInfo.processInfo.environment.merging([
                            "LANTERN_GATEWAY": stack.gateway, "LANTERN_GATEWAY_OPS": stack.operations["gateway", default: ""],
                            "LANTERN_DEV_IDENTITY": "http://127.0.0.1:\(port)",
                            "LANTERN_STATE_DIR": folder.path]) { $1 }
                        func dev(_ arguments: String...) async throws -> ChildProcess.Output {
                            try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"),
                                                       ["python3", ServiceList.root.appendingPathComponent("scripts/dev.py").path] + arguments,
                                                       environment: environment)
                        }
                        // The second run finds Ada and Bohdan paired by the first: the demo starts them afresh.
                        for run in 1...2 {
                            let output = try await dev("demo")
                            let text = String(decoding: output.stdout, as: UTF8.self)
                            #expect(output.status == 0, "run \(run): \(text)\n\(output.stderr)")
                            for step in ["Bohdan's socket: new_moment", "metadata gone", "Sun ", "the chart as SVG", "report ready", "the report as PDF",
                                         "the report answers 403 report_revoked", "break today's cookie",
                                         "409 cookie_not_ready", "move the stack's clock a day ahead", "break tomorrow's cookie", "a new fortune",
                                         "a roast about meetings, spice 3", "streak 1 day, counted for", "0 of 13 badges earned",
                                         "the badge closest to being earned", "29 days ahead", "30 lively days, stage 1", "its evolution, drawn by Lantern's own generator"] {
                                #expect(text.contains(step), "run \(run) printed no '\(step)'")
                            }
                        }
                        // Each run moved the stack's clock 30 days forward (a day for Lucky Day, 29 for Symbi's month): the
                        // gateway's Date header says so, and its operations port tells the offset (every process follows
                        // it within a second).
                        let live = try await stack.http.execute(HTTPClientRequest(url: stack.gateway + "/health/live"), timeout: .seconds(10))
                        let date = try #require(live.headers.first(name: "date").flatMap { Self.imfFixdate.date(from: $0) })
                        #expect(date.timeIntervalSinceNow > 60 * 86_400 - 120 && date.timeIntervalSinceNow < 60 * 86_400 + 120, "Date: \(date)")
                        let clock = try await dev("time-travel")
                        #expect(String(decoding: clock.stdout, as: UTF8.self).contains("60.00 days ahead"), "\(String(decoding: clock.stdout, as: UTF8.self))")
                        // One trace from Ada's upload to Bohdan's socket frame and his phone's notification, in the JSON
                        // logs of three processes: the gateway's access line names it, media's access line, the gateway's
                        // frame and the push worker's delivery carry it (W3C traceparent over HTTP and the event bus).
                        func lines(_ name: String) throws -> [[String: Any]] {
                            try String(contentsOf: try #require(stack.logs[name]), encoding: .utf8).split(separator: "\n")
                                .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                        }
                        let uploads = try lines("gateway").filter { $0["message"] as? String == "request" && $0["route"] as? String == "/v1/moments"
                            && $0["method"] as? String == "POST" && $0["status"] as? String == "201" }
                        #expect(uploads.count == 2, "one upload per demo run in the gateway's JSON log")
                        let trace = try #require(uploads.last?["trace_id"] as? String)
                        #expect(trace.count == 32 && trace != String(repeating: "0", count: 32))
                        try await Task.sleep(for: .seconds(1))  // the last deliveries' lines
                        #expect(try lines("media").contains { $0["trace_id"] as? String == trace && $0["route"] as? String == "/v1/moments" })
                        #expect(try lines("gateway").contains { $0["trace_id"] as? String == trace && $0["message"] as? String == "real-time frame sent"
                            && $0["type"] as? String == "new_moment" })
                        #expect(try lines("push-worker").contains { $0["trace_id"] as? String == trace && $0["message"] as? String == "push delivered" })
                        #expect(try lines("gateway").allSatisfy { $0["hb.request.id"] == nil }, "one request id per line")
                        // The same trace reached the collector as OTLP/HTTP protobuf, from the gateway and from media.
                        #expect(try await eventually { collector.contains(trace: trace) }, "no span of the upload's trace reached the collector")
                        #expect(collector.exports.allSatisfy { $0.contentType == "application/x-protobuf" })
                        let services = collector.exports.map { String(decoding: $0.body, as: UTF8.self) }
                        #expect(services.contains { $0.contains("gateway") } && services.contains { $0.contains("media") })

                        let svg = try String(contentsOf: folder.appendingPathComponent("demo/chart.svg"), encoding: .utf8)
                        #expect(svg.hasPrefix("<svg") || svg.hasPrefix("<?xml"))
                        let report = try Data(contentsOf: folder.appendingPathComponent("demo/career-report.pdf"))
                        #expect(report.starts(with: Data("%PDF-".utf8)))
                        let ghost = try Data(contentsOf: folder.appendingPathComponent("demo/symbi-stage-1.png"))
                        #expect(Array(ghost.prefix(4)) == [0x89, 0x50, 0x4E, 0x47] && ghost.count > 10_000)
                        // After the demo every executable has served, consumed and published: each one's metrics pass
                        // Prometheus's lint, say what they are, and name routes by template.
                        for (name, url) in stack.operations.sorted(by: { $0.key < $1.key }) {
                            let metrics = try await stack.http.execute(HTTPClientRequest(url: url + "/metrics"), timeout: .seconds(10))
                            let text = String(buffer: try await metrics.body.collect(upTo: 16 << 20))
                            let file = folder.appendingPathComponent("\(name).metrics")
                            try text.write(to: file, atomically: true, encoding: .utf8)
                            let lint = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["sh", "-c", "promtool check metrics < '\(file.path)'"])
                            #expect(lint.status == 0, "\(name): promtool check metrics: \(String(decoding: lint.stdout, as: UTF8.self))\(lint.stderr)")
                            #expect(!text.contains(MetricHelp.missing), "\(name) has a metric without a description")
                            #expect(!text.contains("http_route=\"Unknown\"") && !text.contains("hb_requests"), "\(name) still has Hummingbird's metrics")
                        }
                        let gateway = try await stack.http.execute(HTTPClientRequest(url: stack.operations["gateway", default: ""] + "/metrics"), timeout: .seconds(10))
                        let gatewayText = String(buffer: try await gateway.body.collect(upTo: 16 << 20))
                        for route in ["/v1/moments", "/v1/pairing/join", "/v1/astrology/charts/natal", "/v1/fortunes/today/break"] {
                            #expect(gatewayText.contains("lantern_http_requests_total{route=\"\(route)\""), "the gateway counts no \(route)")
                        }
                        #expect(gatewayText.contains("lantern_rate_limit_decisions_total"))
                        // The evolution end to end, on this stack whose clock travels (an account must live 30 days first).
                        try await EndToEnd.Shared.SymbiJourneyTests.evolutionJourney(stack)
                        let google = try await dev("token", "--app", "pairly", "--name", "Ada")
                        #expect(google.status == 0 && String(decoding: google.stdout, as: UTF8.self).contains("existing account"), "\(google.stderr)")
                        let apple = try await dev("token", "--app", "luckyday", "--name", "Olena", "--provider", "apple")
                        #expect(apple.status == 0 && String(decoding: apple.stdout, as: UTF8.self).contains("new account"), "\(apple.stderr)")
                    }
                }
            }
        }
    }
}
