import ContentService
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LanternContracts
import LanternCore
import LanternEvents
import LanternRedis
import LanternTestSupport
import LanternTokens
import NIOCore
import NIOFoundationCompat
import PostgresNIO
import Synchronization
import Crypto
import Testing

/// content on its own database and stream prefix, with a fake identity (tokens, service tokens), a fake astrology
/// (`/internal/astrology/bazi`, checking the service token) and fake LLM servers whose every prompt is checked for
/// personal data. The clock is manual: the test moves time.
struct ContentHarness {
    let client: any TestClientProtocol
    let identity: FakeIdentity
    let astrology: FakeAstrology
    let llm: FakeLLMServers
    let streams: StreamNames
    let redis: RedisClient
    let databaseURL: String
    let time: ManualTime
    let variables: [String: String]

    /// - Parameter llm: variables of the LLM layer (`LLM_MODELS`…); the fakes' URLs and keys are filled in.
    static func run(llm settings: [String: String] = [:], extra: [String: String] = [:], start: Date = ContentHarness.monday0900,
                    _ body: @Sendable (ContentHarness) async throws -> Void) async throws {
        // One manual clock for content and the tokens it checks.
        let time = ManualTime(start)
        let identity = try await FakeIdentity(clock: .manual(time))
        let astrology = FakeAstrology(identity: identity)
        let llm = FakeLLMServers()
        try await llm.run { geminiURL, openAIURL in
            try await identity.serve { identityURL in
                try await astrology.serve { astrologyURL in
                    try await TestEnvironment.withDatabase { url in
                        let prefix = TestEnvironment.uniquePrefix()
                        var variables = ["OPS_PORT": "0", "DATABASE_URL": url, "REDIS_URL": try await TestEnvironment.redisURL(for: "content", prefix: prefix), "STREAM_PREFIX": prefix, "LOG_LEVEL": "warning",
                                         "IDENTITY_URL": identityURL.absoluteString, "ASTROLOGY_URL": astrologyURL.absoluteString,
                                         "SERVICE_SECRET": FakeIdentity.serviceSecret, "SCHEDULER_INTERVAL_SECONDS": "0.2",
                                         "ROASTMELATER_OPERATOR_KEYS": ContentHarness.operatorKeys.map { "\($0.key):\($0.value)" }.joined(separator: ","),
                                         // Generous budgets: only the tests about budgets set them, and a loaded
                                         // machine must not turn a model's answer into an artisanal one.
                                         "FORTUNE_BUDGET_SECONDS": "30", "PROFILE_BUDGET_SECONDS": "30"]
                        if !settings.isEmpty {
                            variables["GEMINI_API_KEY"] = llm.apiKey
                            variables["GEMINI_BASE_URL"] = geminiURL
                            variables["OPENAI_BASE_URL"] = openAIURL
                            variables["OPENAI_API_KEY"] = llm.openAIKey
                        }
                        variables.merge(settings) { $1 }
                        variables.merge(extra) { $1 }
                        let fixed = variables
                        let app = try await buildContentApplication(try ContentConfiguration(settings: .fixed(variables)),
                                                                    dependencies: .init(clock: .manual(time)), logger: TestEnvironment.logger)
                        let redis = RedisClient(endpoint: TestEnvironment.redisEndpoint, size: 1)
                        try await app.test(.router) { client in
                            try await body(ContentHarness(client: client, identity: identity, astrology: astrology, llm: llm,
                                                          streams: StreamNames(prefix: prefix), redis: redis, databaseURL: url, time: time,
                                                          variables: fixed))
                        }
                        await redis.shutdown()
                    }
                }
            }
        }
    }

    /// Monday 23 November 2026, 09:00 in Rome (08:00 UTC).
    static let monday0900 = Date(timeIntervalSince1970: 1_795_420_800)
    /// RoastMeLater's operators and their keys (`ROASTMELATER_OPERATOR_KEYS`).
    static let operatorKeys = ["ops-alice": "alice-0123456789abcdef0123456789abcdef", "ops-bob": "bob-0123456789abcdef0123456789abcdef0"]

    /// A call to an operator API with `key` as its bearer (none: no Authorization header).
    @discardableResult
    func operatorRequest(_ method: HTTPRequest.Method, _ uri: String, key: String?, json: String? = nil, headers extra: HTTPFields = [:]) async throws -> TestResponse {
        var headers = extra
        if let key { headers[.authorization] = "Bearer \(key)" }
        if json != nil { headers[.contentType] = "application/json" }
        return try await client.execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
    }

    /// A second content replica on the same database and streams (its own clock), while `body` runs.
    func replica(_ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let app = try await buildContentApplication(try ContentConfiguration(settings: .fixed(variables)),
                                                    dependencies: .init(clock: .manual(time)), logger: TestEnvironment.logger)
        try await app.test(.router) { client in try await body(client) }
    }

    // MARK: Requests

    @discardableResult
    func request(_ method: HTTPRequest.Method, _ uri: String, as user: UUID, app: AppID = .luckyday, json: String? = nil,
                 headers extra: HTTPFields = [:], on other: (any TestClientProtocol)? = nil) async throws -> TestResponse {
        var headers = extra
        headers[.authorization] = "Bearer \(try await identity.token(user: user, app: app))"
        if json != nil { headers[.contentType] = "application/json" }
        return try await (other ?? client).execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
    }

    static let kyivBirth = #"{"birth":{"date":"1990-05-17","time":"14:35","place":{"id":703448}},"timeZone":"Europe/Rome"}"#

    /// Creates a profile (Kyiv, 1990-05-17 14:35) and checks it was stored.
    @discardableResult
    func createProfile(_ user: UUID, body: String = ContentHarness.kyivBirth) async throws -> ProfileBody {
        let response = try await request(.put, "/v1/fortunes/profile", as: user, json: body)
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return try JSONDecoder.lantern.decode(ProfileBody.self, from: response.body)
    }

    func breakCookie(_ user: UUID, key: String? = nil, on other: (any TestClientProtocol)? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let key { headers[.init("Idempotency-Key")!] = key }
        return try await request(.post, "/v1/fortunes/today/break", as: user, headers: headers, on: other)
    }

    func scalar<T: PostgresDecodable & Sendable>(_ sql: String, as type: T.Type) async throws -> T? {
        try await TestEnvironment.withPostgres(databaseURL) { client in
            let rows = try await client.query(PostgresQuery(unsafeSQL: sql), logger: TestEnvironment.logger)
            for try await value in rows.decode(T.self) { return value }
            return nil
        }
    }

    func count(_ sql: String) async throws -> Int { try await scalar(sql, as: Int.self) ?? -1 }

    /// Runs a statement on content's database (a test setting up what a race or a model would leave).
    func execute(_ sql: String) async throws {
        try await TestEnvironment.withPostgres(databaseURL) { client in
            try await client.query(PostgresQuery(unsafeSQL: sql), logger: TestEnvironment.logger)
        }
    }

    /// Jobs on `lantern.jobs.push` so far.
    func pushJobs() async throws -> [PushRequest] {
        let reply = try await redis.send(["XRANGE", streams.jobs("push"), "-", "+"])
        return (reply.array ?? []).compactMap { $0.array?[1].array?[1].string }.compactMap { try? EventEnvelope.decode($0).payload(as: PushRequest.self) }
    }

    func events(_ type: String) async throws -> [EventEnvelope] {
        let reply = try await redis.send(["XRANGE", streams.events("content"), "-", "+"])
        return (reply.array ?? []).compactMap { $0.array?[1].array?[1].string }.compactMap { try? EventEnvelope.decode($0) }.filter { $0.type == type }
    }

    /// Publishes an identity event, as identity's outbox relay would.
    func identityEvent(_ type: String, subject: UUID, data: JSONValue) async throws {
        let event = EventEnvelope(type: type, occurredAt: Date(), producer: "identity", subject: subject.lowercased, data: data)
        try await EventPublisher(redis: redis).publish(event, to: streams.events("identity"))
    }
}

/// The profile as the API answers it (decoded independently of the service's own types).
struct ProfileBody: Decodable {
    struct Zodiac: Decodable { var animal: String; var element: String; var sign: String }
    struct Pillar: Decodable {
        var role: String; var meaning: String; var stem: String; var branch: String; var animal: String
        var stemElement: String; var polarity: String; var assumed: Bool; var poem: String
    }
    var zodiac: Zodiac
    var nickname: String
    var dayMaster: String
    var pillars: [Pillar]
    var elements: [String: Int]
    var essence: [String]
    var birthTimeKnown: Bool
    var limitations: [String]
    var artisanal: Bool
    var timeZone: String
}

struct CookieBody: Decodable, Equatable {
    struct Fortune: Decodable, Equatable { var id: UUID; var text: String; var artisanal: Bool; var revealedAt: Date }
    var state: String
    var fortune: Fortune?
    var opensAgainAt: Date?
}

struct ProblemBody: Decodable {
    struct FieldError: Decodable { var field: String; var message: String }
    var status: Int
    var code: String
    var errors: [FieldError]?
    var opensAgainAt: String?
}

extension TestResponse {
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder.lantern.decode(T.self, from: body) }
}

/// astrology's `POST /internal/astrology/bazi` as content meets it: a service token of audience `internal`
/// required, astrology's 422 for a date out of range, and a fixed reading (the real computation is checked in
/// astrology's own tests and in the end-to-end journey).
final class FakeAstrology: Sendable {
    let identity: FakeIdentity
    private let received = Mutex<[(subject: String, body: Data)]>([])
    var requests: [(subject: String, body: [String: Any])] {
        received.withLock { $0 }.map { ($0.subject, (try? JSONSerialization.jsonObject(with: $0.body) as? [String: Any]) ?? [:]) }
    }

    init(identity: FakeIdentity) { self.identity = identity }

    /// Natal chart requests answered (JSON and SVG).
    let natalRequests = Atomic<Int>(0)

    /// A chart of 1990-05-17 14:35 in Kyiv, as astrology casts it (signs, houses, aspects within default orbs).
    static let natal = NatalChartSummary(
        planets: [
            .init(body: "sun", sign: "taurus", house: 9, retrograde: false), .init(body: "moon", sign: "capricorn", house: 5, retrograde: false),
            .init(body: "mercury", sign: "taurus", house: 9, retrograde: true), .init(body: "venus", sign: "aries", house: 8, retrograde: false),
            .init(body: "mars", sign: "pisces", house: 7, retrograde: false), .init(body: "jupiter", sign: "cancer", house: 11, retrograde: false),
            .init(body: "saturn", sign: "capricorn", house: 5, retrograde: true), .init(body: "uranus", sign: "capricorn", house: 5, retrograde: true),
            .init(body: "neptune", sign: "capricorn", house: 5, retrograde: true), .init(body: "pluto", sign: "scorpio", house: 3, retrograde: true),
        ],
        houses: .init(ascendantSign: "virgo", midheavenSign: "gemini", reliable: true),
        aspects: [
            .init(first: "sun", second: "moon", type: "trine", orb: 1.8), .init(first: "sun", second: "mercury", type: "conjunction", orb: 4.2),
            .init(first: "sun", second: "saturn", type: "trine", orb: 2.6), .init(first: "sun", second: "pluto", type: "opposition", orb: 8.0),
            .init(first: "moon", second: "saturn", type: "conjunction", orb: 0.8), .init(first: "moon", second: "neptune", type: "conjunction", orb: 1.3),
            .init(first: "moon", second: "jupiter", type: "opposition", orb: 5.1), .init(first: "venus", second: "saturn", type: "square", orb: 3.0),
            .init(first: "venus", second: "uranus", type: "square", orb: 1.9), .init(first: "mars", second: "pluto", type: "trine", orb: 2.4),
            .init(first: "mars", second: "uranus", type: "sextile", orb: 1.1), .init(first: "jupiter", second: "saturn", type: "opposition", orb: 6.9),
            .init(first: "saturn", second: "neptune", type: "conjunction", orb: 2.1), .init(first: "uranus", second: "neptune", type: "conjunction", orb: 1.6),
            .init(first: "neptune", second: "pluto", type: "sextile", orb: 1.0),
        ],
        fingerprint: "")

    static let svg = #"<svg xmlns="http://www.w3.org/2000/svg" width="200" height="200" viewBox="0 0 200 200"><circle cx="100" cy="100" r="90" fill="none" stroke="black"/><text x="100" y="105" text-anchor="middle">☉</text></svg>"#

    /// Metal Horse year (庚午), day master Yang Metal (庚), in the contract astrology answers with.
    static let reading = BaziAnswer(
        pillars: [
            .init(role: "year", meaning: "Destiny", stem: "Geng", stemHanzi: "庚", branch: "Wu", branchHanzi: "午", animal: "horse",
                  stemElement: "metal", branchElement: "fire", polarity: "yang"),
            .init(role: "month", meaning: "Environment", stem: "Xin", stemHanzi: "辛", branch: "Si", branchHanzi: "巳", animal: "snake",
                  stemElement: "metal", branchElement: "fire", polarity: "yin"),
            .init(role: "day", meaning: "Essence", stem: "Geng", stemHanzi: "庚", branch: "Chen", branchHanzi: "辰", animal: "dragon",
                  stemElement: "metal", branchElement: "earth", polarity: "yang"),
            .init(role: "hour", meaning: "Inner Heart", stem: "Gui", stemHanzi: "癸", branch: "Wei", branchHanzi: "未", animal: "goat",
                  stemElement: "water", branchElement: "earth", polarity: "yin"),
        ],
        dayMaster: .init(stem: "Geng", element: "metal", polarity: "yang"),
        elements: ["wood": 0, "fire": 2, "earth": 2, "metal": 3, "water": 1],
        zodiacAnimal: "horse", solarYearAnimal: "horse",
        lunarYear: .init(year: 1990, stem: "Geng", stemHanzi: "庚", branch: "Wu", branchHanzi: "午", element: "metal", polarity: "yang", animal: "horse"),
        lunarDate: .init(year: 1990, month: 4, leap: false, day: 23, monthLength: 30),
        options: .init(dayBoundary: "23:00", solarTime: "clock"), timeKnown: true, warnings: [])

    /// Festival calendars asked for (`year`), and whether the route answers 503 (astrology down).
    let festivalYears = Mutex<[Int]>([])
    let festivalsDown = Atomic<Bool>(false)

    /// Tết and Trung Thu of the Vietnamese calendar 2025–2028, as astrology computes them (the real computation is
    /// checked against the published calendar in astrology's tests, and through the gateway in the journey).
    static let festivals: [Int: [FestivalCalendar.Festival]] = [
        2025: [.init(key: "tet", name: "Tết Nguyên Đán", date: "2025-01-29", kind: "lunar"), .init(key: "trung_thu", name: "Tết Trung Thu", date: "2025-10-06", kind: "lunar")],
        2026: [.init(key: "tet", name: "Tết Nguyên Đán", date: "2026-02-17", kind: "lunar"), .init(key: "trung_thu", name: "Tết Trung Thu", date: "2026-09-25", kind: "lunar")],
        2027: [.init(key: "tet", name: "Tết Nguyên Đán", date: "2027-02-06", kind: "lunar"), .init(key: "trung_thu", name: "Tết Trung Thu", date: "2027-09-15", kind: "lunar")],
        2028: [.init(key: "tet", name: "Tết Nguyên Đán", date: "2028-01-26", kind: "lunar"), .init(key: "trung_thu", name: "Tết Trung Thu", date: "2028-10-03", kind: "lunar")],
    ]

    func serve<T: Sendable>(_ body: @Sendable (URL) async throws -> T) async throws -> T {
        let router = Router()
        let verifier = await identity.issuer.localVerifier()
        router.get(RouterPath(AstrologyEndpoint.festivals.path)) { request, _ -> Response in
            guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
                  (try? await verifier.verify(String(header.dropFirst(7)), audience: TokenAudience.service)) != nil else {
                return Response(status: .unauthorized)
            }
            guard !self.festivalsDown.load(ordering: .relaxed) else { return Response(status: .serviceUnavailable) }
            guard request.uri.queryParameters["calendar"] == "vietnamese", let year = request.uri.queryParameters["year"].flatMap({ Int(String($0)) }) else {
                return Response(status: .badRequest)
            }
            self.festivalYears.withLock { $0.append(year) }
            let answer = FestivalCalendar(calendar: "vietnamese", year: year, festivals: Self.festivals[year] ?? [])
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: try JSONEncoder().encode(answer))))
        }
        router.post(RouterPath(AstrologyEndpoint.bazi.path)) { request, _ -> Response in
            guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
                  let claims = try? await verifier.verify(String(header.dropFirst(7)), audience: TokenAudience.service) else {
                return Response(status: .unauthorized)
            }
            let data = try await request.body.collect(upTo: 1 << 16)
            let json = (try? JSONSerialization.jsonObject(with: Data(buffer: data)) as? [String: Any]) ?? [:]
            let subject = claims.sub
            self.received.withLock { $0.append((subject, Data(buffer: data))) }
            if (json["date"] as? String)?.hasPrefix("18") == true {
                let problem = #"{"type":"https://lantern.dev/problems/validation-failed","title":"Invalid request","status":422,"code":"validation_failed","detail":"date: must be a real date YYYY-MM-DD between 1900-01-01 and 2100-12-31","errors":[{"field":"date","message":"must be a real date YYYY-MM-DD between 1900-01-01 and 2100-12-31"}]}"#
                return Response(status: .unprocessableContent, headers: [.contentType: "application/problem+json"], body: .init(byteBuffer: ByteBuffer(string: problem)))
            }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: try JSONEncoder().encode(Self.reading))))
        }
        // Natal charts: the same placements for any birth, the fingerprint a hash of the birth data, the houses
        // unreliable without a time; the SVG a small real drawing.
        for path in [AstrologyEndpoint.natalChartPath, AstrologyEndpoint.natalChartSVGPath] {
            router.post(RouterPath(path)) { request, _ -> Response in
                guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
                      (try? await verifier.verify(String(header.dropFirst(7)), audience: TokenAudience.service)) != nil else {
                    return Response(status: .unauthorized)
                }
                let data = Data(buffer: try await request.body.collect(upTo: 1 << 16))
                let json = (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
                self.natalRequests.add(1, ordering: .relaxed)
                if (json["date"] as? String)?.hasPrefix("18") == true {
                    let problem = #"{"type":"about:blank","title":"Invalid request","status":422,"code":"validation_failed","errors":[{"field":"date","message":"must be a real date YYYY-MM-DD between 1900-01-01 and 2100-12-31"}]}"#
                    return Response(status: .unprocessableContent, headers: [.contentType: "application/problem+json"], body: .init(byteBuffer: ByteBuffer(string: problem)))
                }
                let timeKnown = json["time"] is String
                // Of the normalised fields, as astrology's is (the JSON's key order is the encoder's business).
                let place = (json["place"] as? [String: Any]) ?? [:]
                let normalised = "\(json["date"] ?? "")|\(json["time"] ?? "unknown")|\(place["id"] ?? "")|\(place["latitude"] ?? "")|\(place["longitude"] ?? "")"
                let fingerprint = SHA256.hash(data: Data(normalised.utf8)).map { String(format: "%02x", $0) }.joined()
                if path.hasSuffix(".svg") {
                    // `?fingerprint=`: another chart's birth data is refused before anything is drawn.
                    if let expected = request.uri.queryParameters["fingerprint"], String(expected) != fingerprint {
                        let problem = #"{"type":"https://lantern.dev/problems/fingerprint-mismatch","title":"Another chart","status":409,"code":"fingerprint_mismatch","detail":"The birth data is not that of the chart with this fingerprint."}"#
                        return Response(status: .conflict, headers: [.contentType: "application/problem+json"], body: .init(byteBuffer: ByteBuffer(string: problem)))
                    }
                    return Response(status: .ok, headers: [.contentType: "image/svg+xml"], body: .init(byteBuffer: ByteBuffer(string: Self.svg)))
                }
                var chart = Self.natal
                chart.fingerprint = fingerprint
                chart.houses.reliable = timeKnown
                let body = try JSONEncoder().encode(chart)
                return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: body)))
            }
        }
        return try await LoopbackServer.run(router: router) { port in try await body(URL(string: "http://127.0.0.1:\(port)")!) }
    }
}
