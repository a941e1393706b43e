import AsyncHTTPClient
import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import LanternTestSupport
import NIOCore
import NIOFoundationCompat
import PostgresNIO
import Synchronization
import Testing

extension EndToEnd.Shared {
    @Suite("Symbi end to end through the gateway", .serialized)
    struct SymbiJourneyTests {
        struct State: Decodable {
            var state: String; var source: String; var localDate: String?; var activeDays: Int; var stage: Int; var daysToNextEvolution: Int
        }

        static func count(_ stack: Stack, _ sql: String) async throws -> Int {
            try await TestEnvironment.withPostgres(stack.databaseURL) { client in
                let rows = try await client.query(PostgresQuery(unsafeSQL: sql), logger: TestEnvironment.logger)
                for try await n in rows.decode(Int.self) { return n }
                return -1
            }
        }

        /// 30 days ending today in Ho Chi Minh City's calendar as of `now`, each active.
        static func month(endingAt now: Date) -> [String] {
            let zone = TimeZone(identifier: "Asia/Ho_Chi_Minh")!
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let formatter = DateFormatter()
            formatter.calendar = calendar
            formatter.timeZone = zone
            formatter.dateFormat = "yyyy-MM-dd"
            return (0..<30).map { back in
                let date = formatter.string(from: calendar.date(byAdding: .day, value: back - 29, to: now)!)
                return #"{"date":"\#(date)","source":"googlefit","steps":\#(9_000 + back),"sleepHours":7.5,"hrvMs":\#(40 + back % 5)}"#
            }
        }

        /// `body` while a consumer group stands in for evolution-worker on lantern.jobs.evolution; `jobs()` is what it
        /// has read so far.
        static func observingEvolutionJobs(_ stack: Stack, _ body: @Sendable (@escaping @Sendable () -> [EventEnvelope]) async throws -> Void) async throws {
            let jobs = Jobs()
            var options = StreamConsumer.Options(stream: stack.streams.jobs("evolution"), group: "e2e-evolution-observer", consumer: "1")
            options.block = .milliseconds(200)
            let observer = StreamConsumer(endpoint: TestEnvironment.redisEndpoint, streams: stack.streams, options: options,
                                          logger: TestEnvironment.logger) { event in
                if event.type == SymbiEvents.EvolutionRequested.eventType { jobs.append(event) }
            }
            try await withService(observer) { try await body { jobs.all } }
        }

        final class Jobs: Sendable {
            private let value = Mutex<[EventEnvelope]>([])
            func append(_ event: EventEnvelope) { value.withLock { $0.append(event) } }
            var all: [EventEnvelope] { value.withLock { $0 } }
        }

        @Test("device sign-in → 30 back-dated days from an offline phone on a new account: counted, state frames on the socket, but no evolution before the account has lived 30 days (#44 item 2) → export → deletion")
        func journey() async throws {
            try await Stack.shared { stack in
                try await Self.observingEvolutionJobs(stack) { jobs in
                    let signIn = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"symbi"}"#)
                    #expect(signIn.status == 201, "\(signIn.text)")
                    let tokens = try signIn.json(TokenReply.self)
                    let token = tokens.accessToken, user = try #require(tokens.user?.id)
                    let socket = PairlyRealtimeJourneyTests.Socket(gateway: stack.gateway, token: token)
                    defer { socket.close() }
                    #expect(try await eventually { socket.types.contains("state") })

                    let fresh = try await stack.call(.GET, "/v1/symbi/state", token: token)
                    #expect(fresh.status == 200 && fresh.headers.first(name: "ETag") != nil)
                    #expect(try fresh.json(State.self).source == "default")
                    let other = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"luckyday"}"#)
                    #expect(try await stack.call(.GET, "/v1/symbi/state", token: try other.json(TokenReply.self).accessToken).problemCode == "symbi_only")

                    let bad = try await stack.call(.POST, "/v1/symbi/metrics", token: token,
                                                   json: #"{"timeZone":"Asia/Ho_Chi_Minh","days":[{"date":"2026-01-01","source":"googlefit","steps":100001}]}"#)
                    #expect(bad.status == 422 && bad.text.contains("days[0].steps"))
                    // A whole number is due: 9000.5 steps is named, not a 400 for valid JSON (#44 item 5).
                    let fractional = try await stack.call(.POST, "/v1/symbi/metrics", token: token,
                                                          json: #"{"timeZone":"Asia/Ho_Chi_Minh","days":[{"date":"2026-01-01","source":"googlefit","steps":9000.5,"sleepHours":7.5}]}"#)
                    #expect(fractional.status == 422 && fractional.text.contains("days[0].steps"), "\(fractional.text)")
                    // The phone was offline for a month: 29 earlier days and today in one batch, each active. They count,
                    // but an account minutes old has not lived them: no evolution, no image model's call.
                    let days = Self.month(endingAt: Date())
                    let upload = try await stack.call(.POST, "/v1/symbi/metrics", token: token,
                                                      json: #"{"timeZone":"Asia/Ho_Chi_Minh","days":[\#(days.joined(separator: ","))]}"#)
                    #expect(upload.status == 200, "\(upload.text)")
                    let state = try upload.json(State.self)
                    #expect(state.state == "active" && state.source == "rules" && state.activeDays == 30 && state.stage == 0)
                    #expect(state.daysToNextEvolution == 29, "\(upload.text)")
                    #expect(try await eventually { socket.data("symbi_state").contains { $0["activeDays"] as? Int == 30 && $0["state"] as? String == "active" } })
                    try await Task.sleep(for: .milliseconds(500))
                    #expect(jobs().isEmpty, "an evolution was requested for an account minutes old")

                    let export = try await stack.call(.GET, "/v1/symbi/export", token: token)
                    #expect(export.status == 200 && export.text.contains("\"hrvMs\""))
                    #expect(try await stack.call(.DELETE, "/v1/me", token: token).status == 204)
                    #expect(try await eventually {
                        try await Self.count(stack, "SELECT count(*)::int FROM health.pets WHERE user_id = '\(user)'") == 0
                    })
                    #expect(try await stack.columnsNaming(user).filter { $0.hasPrefix("health.") || $0.hasPrefix("evolution.") } == [])
                }
            }
        }

        /// On a development stack (time travel): an account that has lived 30 days uploads its month → the evolution
        /// requested once → drawn by evolution-worker → the evolved frame → the gallery → the picture → deletion takes
        /// the picture too. Run by `DevKitTests`, whose stack follows the travelled clock.
        static func evolutionJourney(_ stack: Stack) async throws {
            try await observingEvolutionJobs(stack) { jobs in
                let signIn = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"symbi"}"#)
                #expect(signIn.status == 201, "\(signIn.text)")
                let first = try signIn.json(TokenReply.self)
                let user = try #require(first.user?.id)
                // The account lives 29 days (the stack's clock, which every process follows within a second).
                var travel = HTTPClientRequest(url: stack.operations["gateway", default: ""] + "/development/clock")
                travel.method = .POST
                travel.headers.add(name: "Content-Type", value: "application/json")
                travel.body = .bytes(ByteBuffer(string: #"{"days":29}"#))
                let moved = try await stack.http.execute(travel, timeout: .seconds(10))
                struct Clock: Decodable { var now: Date }
                let clock = try JSONDecoder.lantern.decode(Clock.self, from: Data(buffer: try await moved.body.collect(upTo: 1 << 16)))
                try await Task.sleep(for: .milliseconds(1_500))
                let refreshed = try await stack.call(.POST, "/v1/auth/refresh", json: #"{"refreshToken":"\#(first.refreshToken)"}"#)
                #expect(refreshed.status == 200, "\(refreshed.text)")
                let token = try refreshed.json(TokenReply.self).accessToken
                let other = try await stack.call(.POST, "/v1/auth/device", json: #"{"deviceId":"\#(UUID().uuidString)","app":"luckyday"}"#)
                let socket = PairlyRealtimeJourneyTests.Socket(gateway: stack.gateway, token: token)
                defer { socket.close() }
                #expect(try await eventually { socket.types.contains("state") })

                let days = Self.month(endingAt: clock.now)
                let upload = try await stack.call(.POST, "/v1/symbi/metrics", token: token,
                                                  json: #"{"timeZone":"Asia/Ho_Chi_Minh","days":[\#(days.joined(separator: ","))]}"#)
                #expect(upload.status == 200, "\(upload.text)")
                let state = try upload.json(State.self)
                #expect(state.state == "active" && state.activeDays == 30 && state.stage == 1, "\(upload.text)")
                // The stream also holds the demo's jobs, read by this new group from its start: this user's only.
                @Sendable func mine() -> [SymbiEvents.EvolutionRequested] {
                    jobs().compactMap { try? $0.payload(as: SymbiEvents.EvolutionRequested.self) }.filter { $0.userId == user }
                }
                #expect(try await eventually { mine().count == 1 })
                let job = try #require(mine().first)
                #expect(job.stage == 1)
                // The same batch again (a retry) evolves nothing more.
                #expect(try await stack.call(.POST, "/v1/symbi/metrics", token: token,
                                             json: #"{"timeZone":"Asia/Ho_Chi_Minh","days":[\#(days.joined(separator: ","))]}"#).status == 200)
                try await Task.sleep(for: .milliseconds(500))
                #expect(mine().count == 1)

                // evolution-worker draws it (Lantern's own generator: the stack has no image model), health-brain records
                // it and tells the app.
                #expect(try await eventually { socket.data("symbi_evolved").contains { $0["evolutionId"] as? String == job.evolutionId && $0["stage"] as? Int == 1 } })
                struct Gallery: Decodable {
                    struct Evolution: Decodable {
                        struct Image: Decodable { var url: String; var contentType: String?; var width: Int?; var generator: String? }
                        var evolutionId: String; var stage: Int; var status: String; var current: Bool; var image: Image?
                    }
                    var evolutions: [Evolution]
                }
                let gallery = try await stack.call(.GET, "/v1/symbi/evolutions", token: token)
                #expect(gallery.status == 200, "\(gallery.text)")
                let form = try #require(try gallery.json(Gallery.self).evolutions.first)
                #expect(form.evolutionId == job.evolutionId && form.status == "ready" && form.current)
                let image = try #require(form.image)
                #expect(image.contentType == "image/png" && image.width == 1024 && image.generator == "local")
                #expect(try await stack.call(.GET, "/v1/symbi/state", token: token).text.contains(job.evolutionId))
                let picture = try await stack.call(.GET, image.url, token: token)
                #expect(picture.status == 200 && picture.headers.first(name: "Content-Type") == "image/png")
                #expect(Array(picture.body.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] && picture.body.count > 10_000)
                let etag = try #require(picture.headers.first(name: "ETag"))
                #expect(try await stack.call(.GET, image.url, token: token, headers: [("If-None-Match", etag)]).status == 304)
                #expect(try await stack.call(.GET, image.url, token: try other.json(TokenReply.self).accessToken).problemCode == "symbi_only")
                let pictureFile = stack.symbiPictures.appendingPathComponent("\(job.evolutionId).png")
                #expect(FileManager.default.fileExists(atPath: pictureFile.path))

                #expect(try await stack.call(.DELETE, "/v1/me", token: token).status == 204)
                #expect(try await eventually {
                    try await Self.count(stack, "SELECT count(*)::int FROM health.pets WHERE user_id = '\(user)'") == 0
                })
                #expect(try await stack.columnsNaming(user).filter { $0.hasPrefix("health.") || $0.hasPrefix("evolution.") } == [])
                // The pictures go with the account (evolution-worker).
                #expect(try await eventually { !FileManager.default.fileExists(atPath: pictureFile.path) })
            }
        }
    }
}
