import ArgumentParser
import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import LanternRedis
import Logging
import PostgresNIO
import Synchronization

/// A running `gamification` fed `roast.generated` at a fixed rate on content's stream, as content's outbox relay
/// would: the lag from each event's XADD to its acknowledgement by gamification's group (acknowledged = its counters
/// and badges committed), then that none was lost or counted twice (its processed id and the users' counters).
struct GamificationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "gamification", abstract: "roast events → gamification: lag at a fixed rate, none lost")

    @Option(help: "Redis URL") var redis = "redis://127.0.0.1:63809/0"
    @Option(help: "PostgreSQL URL of gamification's database") var databaseURL: String
    @Option(help: "the stack's STREAM_PREFIX") var prefix = "lantern"
    @Option(help: "events per second") var rate = 1_000
    @Option(help: "seconds of events") var seconds = 10
    @Option(help: "distinct users the events are about") var users = 1_000

    func run() async throws {
        let client = RedisClient(endpoint: try RedisEndpoint(url: redis), size: 2)
        let stream = StreamNames(prefix: prefix).events("content")
        let group = "gamification"
        try await waitFor(seconds: 30) {
            let reply = try await client.send(["XINFO", "GROUPS", stream])
            return (reply.array ?? []).contains { Self.field("name", of: $0) == group }
        }
        let people = (0..<users).map { _ in UUID() }
        let categories = ["meetings", "deadlines", "email", "coworkers", "boss", "remote", "tech", "office"]
        let count = rate * seconds
        let sent = Mutex<[(id: StreamID, at: ContinuousClock.Instant)]>([])
        // Acknowledged entries are a prefix of the published ones (a group delivers in order): when each was.
        let done = Mutex<[ContinuousClock.Instant]>([])
        let finished = Atomic<Bool>(false)
        var eventIDs: [UUID] = []
        let publisher = EventPublisher(redis: client, maxLength: 1_000_000)

        // The acknowledgements: every id below the group's oldest pending one (or up to its last delivered, when
        // nothing is pending) is done; polled every 2 ms.
        let watcher = Task {
            let poller = RedisClient(endpoint: try RedisEndpoint(url: redis), size: 1)
            defer { Task { await poller.shutdown() } }
            while !finished.load(ordering: .relaxed) {
                let groups = try await poller.send(["XINFO", "GROUPS", stream])
                let pending = try await poller.send(["XPENDING", stream, group])
                let now = ContinuousClock.now
                guard let entry = (groups.array ?? []).first(where: { Self.field("name", of: $0) == group }),
                      let delivered = Self.field("last-delivered-id", of: entry).flatMap(StreamID.init) else { continue }
                let oldestPending = pending.array.flatMap { $0.count > 1 ? $0[1].string : nil }.flatMap(StreamID.init)
                let acknowledged: (StreamID) -> Bool = { id in oldestPending.map { id < $0 } ?? (id <= delivered) }
                let cursor = done.withLock { $0.count }
                let newlyDone = sent.withLock { sent in sent[cursor...].prefix { acknowledged($0.id) }.count }
                if newlyDone > 0 { done.withLock { $0 += Array(repeating: now, count: newlyDone) } }
                try await Task.sleep(for: .milliseconds(2))
            }
        }

        let interval = Duration.nanoseconds(1_000_000_000 / rate)
        var next = ContinuousClock.now
        // Users, categories, spice and scenarios drawn at random (seeded: the same run each time), so badges are
        // earned now and then through the run, as they would be, not by every user in the same second.
        var random = SeededRandom(seed: 2026)
        for n in 0..<count {
            next += interval
            let user = people[random.next(below: people.count)]
            let inCollection = random.next(below: 3) == 0
            let event = ContentEvents.RoastGenerated(roastId: UUID().lowercased, userId: user.lowercased, category: categories[random.next(below: categories.count)],
                                                     spice: random.next(below: 5) + 1, mood: nil, language: n % 2 == 0 ? "en" : "vi", artisanal: true,
                                                     localDate: "2026-11-26", createdAt: Date(), collection: inCollection ? "classic_office" : nil,
                                                     scenario: inCollection ? "scenario_\(random.next(below: 12))" : nil, collectionSize: inCollection ? 12 : nil)
            let envelope = try EventEnvelope(event, producer: "content", subject: user.lowercased, occurredAt: Date())
            eventIDs.append(envelope.id)
            let at = ContinuousClock.now
            let id = try await publisher.publish(envelope, to: stream)
            if let streamID = StreamID(id) { sent.withLock { $0.append((streamID, at)) } }
            try await Task.sleep(until: next, clock: .continuous)
        }
        try await waitFor(seconds: 120) { done.withLock { $0.count } >= count }
        finished.store(true, ordering: .relaxed)
        _ = try? await watcher.value

        let published = sent.withLock { $0 }
        let lags = done.withLock { done in zip(published, done).map { ($1 - $0.at).inSeconds * 1e3 } }.sorted()
        func percentile(_ p: Double) -> Double { lags.isEmpty ? .nan : lags[min(lags.count - 1, Int(Double(lags.count) * p))] }

        // None lost, none twice: every event id processed once, and the users' roast counters add up to the events.
        let logger: Logger = {
            var logger = Logger(label: "bench")
            logger.logLevel = .warning
            return logger
        }()
        let ids = eventIDs
        let (processed, counted, badges) = try await withPostgres(databaseURL, logger: logger) { postgres in
            var processed = 0, counted = 0, badges = 0
            for try await n in try await postgres.query("""
                SELECT count(*)::int FROM gamification.processed_events WHERE consumer = 'gamification.activity' AND event_id = ANY(\(ids))
                """, logger: logger).decode(Int.self) { processed = n }
            for try await n in try await postgres.query("""
                SELECT coalesce(sum(value), 0)::int FROM gamification.counters WHERE metric = 'count:roast.generated' AND user_id = ANY(\(people))
                """, logger: logger).decode(Int.self) { counted = n }
            for try await n in try await postgres.query("""
                SELECT count(*)::int FROM gamification.badges WHERE user_id = ANY(\(people))
                """, logger: logger).decode(Int.self) { badges = n }
            return (processed, counted, badges)
        }
        print(String(format: "gamification.events rate=%d/s events=%d users=%d lag_p50=%.1fms lag_p99=%.1fms lag_max=%.1fms processed=%d counted=%d lost=%d badges=%d",
                     rate, count, users, percentile(0.5), percentile(0.99), lags.last ?? .nan, processed, counted, count - processed, badges))
        await client.shutdown()
    }

    static func field(_ name: String, of entry: RedisValue) -> String? {
        guard let items = entry.array else { return nil }
        var index = 0
        while index + 1 < items.count {
            if items[index].string == name { return items[index + 1].string }
            index += 2
        }
        return nil
    }
}

/// SplitMix64: a small seeded generator.
struct SeededRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(below bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}

/// A stream entry id `ms-seq`, ordered as Redis orders them.
struct StreamID: Hashable, Comparable, Sendable {
    var milliseconds: UInt64
    var sequence: UInt64

    init?(_ text: String) {
        let parts = text.split(separator: "-")
        guard parts.count == 2, let ms = UInt64(parts[0]), let seq = UInt64(parts[1]) else { return nil }
        milliseconds = ms
        sequence = seq
    }

    static func < (a: StreamID, b: StreamID) -> Bool { (a.milliseconds, a.sequence) < (b.milliseconds, b.sequence) }
}

/// A PostgreSQL client for the duration of `body`.
func withPostgres<T: Sendable>(_ url: String, logger: Logger, _ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
    guard let components = URLComponents(string: url), let host = components.host else { throw ValidationError("bad PostgreSQL URL") }
    let configuration = PostgresClient.Configuration(host: host, port: components.port ?? 5432, username: components.user ?? "postgres",
                                                     password: components.password, database: String(components.path.dropFirst()), tls: .disable)
    let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { await client.run(); return nil }
        defer { group.cancelAll() }
        return try await body(client)
    }
}
