import ContentKit
import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import Logging
import PostgresNIO

/// RoastMeLater's roasts (`content.roasts`) and the rewards that unlock parts of its catalogue
/// (`content.roast_rewards`); every change a user makes is announced in the transaction that makes it.
struct RoastStore: RoastRecords {
    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger

    static let columns = "id, user_id, category, spice, mood, language, text, artisanal, source, local_date::text, reaction, reacted_at, favourite, created_at, collection, scenario, shares"

    static func decode(_ row: PostgresRow) throws -> Roast {
        let (id, user, category, spice, mood, language, text, artisanal, source, localDate, reaction, reactedAt, favourite, created, collection, scenario,
             shares) =
            try row.decode((UUID, UUID, String, Int, String?, String, String, Bool, String, String, String?, Date?, Bool, Date, String?, String?, Int).self)
        guard let language = RoastLanguage(rawValue: language) else { throw StoreInconsistency("content.roasts \(id): language '\(language)'") }
        return Roast(id: id, userID: user, category: category, spice: spice, mood: mood, language: language, text: text, artisanal: artisanal,
                     source: source, localDate: localDate, reaction: reaction.flatMap(RoastReaction.init(rawValue:)), reactedAt: reactedAt,
                     favourite: favourite, createdAt: created, collection: collection, scenario: scenario,
                     shares: shares)
    }

    private func first(_ rows: PostgresRowSequence) async throws -> Roast? {
        for try await row in rows { return try Self.decode(row) }
        return nil
    }

    func roast(idempotencyKey key: String, of user: UUID) async throws -> Roast? {
        try await first(client.query("""
            SELECT \(unescaped: Self.columns) FROM content.roasts WHERE user_id = \(user) AND idempotency_key = \(key)
            """, logger: logger))
    }

    /// The user's roast `id`: one they asked for, or their widget's roast of the day (REQ-WDG-003: the widget opens the
    /// full roast with sharing options), which joins their roasts the first time it is asked for by id.
    func roast(_ id: UUID, of user: UUID) async throws -> Roast? {
        if let roast = try await first(client.query("SELECT \(unescaped: Self.columns) FROM content.roasts WHERE id = \(id) AND user_id = \(user)", logger: logger)) {
            return roast
        }
        guard try await adoptRoastOfTheDay(id, user: user) else { return nil }
        return try await first(client.query("SELECT \(unescaped: Self.columns) FROM content.roasts WHERE id = \(id) AND user_id = \(user)", logger: logger))
    }

    /// Copies the user's roast of the day `id` into their roasts (no event: they did not ask for a roast; sharing it
    /// is announced like any other). True when there is such a roast (copied now or before).
    private func adoptRoastOfTheDay(_ id: UUID, user: UUID) async throws -> Bool {
        let rows = try await client.query("""
            INSERT INTO content.roasts (id, user_id, category, spice, language, text, artisanal, source, local_date, created_at)
            SELECT d.id, d.user_id, d.category, d.spice, d.language, d.text, d.artisanal, d.source, d.local_date, d.created_at
            FROM content.roasts_of_the_day d
            WHERE d.id = \(id) AND d.user_id = \(user) AND content.admit_user(\(ErasedUsers.hash(user)))
            ON CONFLICT (id) DO NOTHING
            RETURNING 1
            """, logger: logger)
        for try await _ in rows { return true }
        for try await _ in try await client.query("SELECT 1 FROM content.roasts WHERE id = \(id) AND user_id = \(user)", logger: logger) { return true }
        return false
    }

    func taste(of user: UUID, category: String) async throws -> RoastTaste {
        for try await (dislikes, favourites) in try await client.execute(ReadTaste(user: user, category: category), logger: logger) {
            return RoastTaste(recentDislikes: dislikes, favourites: favourites)
        }
        return .none
    }

    /// The read of every roast, prepared once per connection (planned once, not per request): in one round trip,
    /// the dislikes among the category's latest roasts and the user's latest 🔥 texts.
    struct ReadTaste: PostgresPreparedStatement {
        /// Its name on each connection, spelled out: postgres-nio's default reflects the type's name on every call.
        static let name = "roastmelater.read_taste"
        static let sql = """
            SELECT (SELECT count(*) FILTER (WHERE reaction = 'dislike')::int FROM (
                        SELECT reaction FROM content.roasts WHERE user_id = $1 AND category = $2 ORDER BY id DESC LIMIT \(RoastTaste.window)
                    ) latest),
                   (SELECT coalesce(array_agg(text), '{}') FROM (
                        SELECT text FROM content.roasts WHERE user_id = $1 AND reaction = 'fire'
                        ORDER BY (category = $2) DESC, reacted_at DESC LIMIT \(RoastTaste.maxExamples)
                    ) loved)
            """
        typealias Row = (Int, [String])
        var user: UUID
        var category: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(user)
            bindings.append(category)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    func stats(of user: UUID) async throws -> RoastStats {
        var stats = RoastStats(total: 0, favourites: 0, reactions: [:], moods: [:], categories: [:])
        let rows = try await client.query("""
            SELECT 'reaction', reaction, count(*)::int FROM content.roasts WHERE user_id = \(user) AND reaction IS NOT NULL GROUP BY reaction
            UNION ALL SELECT 'mood', coalesce(mood, 'none'), count(*)::int FROM content.roasts WHERE user_id = \(user) GROUP BY mood
            UNION ALL SELECT 'category', category, count(*)::int FROM content.roasts WHERE user_id = \(user) GROUP BY category
            UNION ALL SELECT 'favourite', 'favourite', count(*)::int FROM content.roasts WHERE user_id = \(user) AND favourite
            """, logger: logger)
        for try await (kind, key, count) in rows.decode((String, String, Int).self) {
            switch kind {
            case "reaction": stats.reactions[key] = count
            case "mood": stats.moods[key] = count; stats.total += count
            case "category": stats.categories[key] = count
            default: stats.favourites = count
            }
        }
        return stats
    }

    func all(of user: UUID) async throws -> [Roast] {
        var roasts: [Roast] = []
        for try await row in try await client.query("""
            SELECT \(unescaped: Self.columns) FROM content.roasts WHERE user_id = \(user) ORDER BY id
            """, logger: logger) { roasts.append(try Self.decode(row)) }
        return roasts
    }

    func hasReward(_ reward: String, user: UUID) async throws -> Bool {
        for try await _ in try await client.query("""
            SELECT 1 FROM content.roast_rewards WHERE user_id = \(user) AND reward = \(reward)
            """, logger: logger) { return true }
        return false
    }

    func record(_ roast: Roast, idempotencyKey key: String?) async throws -> Roast {
        let event = try outbox.prepare(ContentEvents.RoastGenerated(
            roastId: roast.id.lowercased, userId: roast.userID.lowercased, category: roast.category, spice: roast.spice, mood: roast.mood,
            language: roast.language.rawValue, artisanal: roast.artisanal, localDate: roast.localDate, createdAt: roast.createdAt,
            collection: roast.collection, scenario: roast.scenario, collectionSize: roast.collectionSize),
            subject: roast.userID.lowercased, at: roast.createdAt)
        // One statement: the roast and its event commit together in one round trip (the outbox row is written only
        // when the roast was, not for a retry that lost the race on its Idempotency-Key, nor for an erased user:
        // the statement admits itself past the erasure fence, `ErasedUsers`).
        var stored: Roast?
        for try await row in try await client.execute(RecordRoast(roast: roast, key: key, event: event), logger: logger) { stored = row }
        if let stored {
            outbox.committed()
            return stored
        }
        // Another call with the same key committed first, or the user was erased meanwhile.
        if let key, let earlier = try await self.roast(idempotencyKey: key, of: roast.userID) { return earlier }
        if try await ErasedUsers.contains(roast.userID, schema: ContentSchema.name, client: client, logger: logger) { throw AccountErased() }
        throw StoreInconsistency("content.roasts: an insert conflicted on a key that is not there")
    }

    /// The write of every roast, prepared once per connection. Its event goes to `content.outbox` (content's schema,
    /// as its tables'); the types are given, since mood, key, collection and scenario may be absent.
    struct RecordRoast: PostgresPreparedStatement {
        static let name = "roastmelater.record_roast"
        static let sql = """
            WITH inserted AS (
                INSERT INTO content.roasts (id, user_id, category, spice, mood, language, text, artisanal, source, local_date, created_at,
                                            idempotency_key, collection, scenario)
                SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10::date, $11, $12, $13, $14 WHERE content.admit_user($18)
                ON CONFLICT (user_id, idempotency_key) DO NOTHING
                RETURNING \(RoastStore.columns)
            ), announced AS (
                INSERT INTO content.outbox (stream, event_id, payload) SELECT $15, $16, $17 FROM inserted
            )
            SELECT \(RoastStore.columns) FROM inserted
            """
        static let bindingDataTypes: [PostgresDataType] = [.uuid, .uuid, .text, .int8, .text, .text, .text, .bool, .text, .text,
                                                           .timestamptz, .text, .text, .text, .text, .uuid, .text, .bytea]
        typealias Row = Roast
        var roast: Roast
        var key: String?
        var event: Outbox.Row

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 18)
            bindings.append(roast.id)
            bindings.append(roast.userID)
            bindings.append(roast.category)
            bindings.append(roast.spice)
            bindings.append(roast.mood)
            bindings.append(roast.language.rawValue)
            bindings.append(roast.text)
            bindings.append(roast.artisanal)
            bindings.append(roast.source)
            bindings.append(roast.localDate)
            bindings.append(roast.createdAt)
            bindings.append(key)
            bindings.append(roast.collection)
            bindings.append(roast.scenario)
            bindings.append(event.stream)
            bindings.append(event.eventID)
            bindings.append(event.payload)
            bindings.append(ErasedUsers.hash(roast.userID))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try RoastStore.decode(row) }
    }

    func page(of user: UUID, _ filter: RoastFilter) async throws -> RoastPage {
        var sql = "SELECT \(Self.columns) FROM content.roasts WHERE user_id = $1"
        var bindings = PostgresBindings()
        bindings.append(user)
        func and(_ condition: String, _ value: some PostgresEncodable & Sendable) throws {
            try bindings.append(value)
            sql += " AND \(condition) $\(bindings.count)"
        }
        if let mood = filter.mood { try and("mood =", mood) }
        if let category = filter.category { try and("category =", category) }
        if let reaction = filter.reaction { try and("reaction =", reaction.rawValue) }
        if let favourite = filter.favourite { try and("favourite =", favourite) }
        if let collection = filter.collection { try and("collection =", collection) }
        if let before = filter.before { try and("id <", before) }
        bindings.append(filter.limit + 1)
        sql += " ORDER BY id DESC LIMIT $\(bindings.count)"
        var roasts: [Roast] = []
        for try await row in try await client.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger) {
            roasts.append(try Self.decode(row))
        }
        let more = roasts.count > filter.limit
        if more { roasts.removeLast() }
        return RoastPage(roasts: roasts, next: more ? roasts.last?.id : nil)
    }

    func setFavourite(_ favourite: Bool, roast id: UUID, user: UUID, at date: Date) async throws -> Roast? {
        try await change(id, user: user, changed: { $0.favourite != favourite }) { _, connection in
            let updated = try await first(connection.query("""
                UPDATE content.roasts SET favourite = \(favourite) WHERE id = \(id) RETURNING \(unescaped: Self.columns)
                """, logger: logger))
            try await outbox.enqueue(ContentEvents.RoastFavourited(roastId: id.lowercased, userId: user.lowercased, favourite: favourite, at: date),
                                     subject: user.lowercased, at: date, on: connection, logger: logger)
            return updated
        }
    }

    func setReaction(_ reaction: RoastReaction?, roast id: UUID, user: UUID, at date: Date) async throws -> Roast? {
        let value = reaction?.rawValue, reactedAt = reaction == nil ? nil : date
        return try await change(id, user: user, changed: { $0.reaction != reaction }) { current, connection in
            let updated = try await first(connection.query("""
                UPDATE content.roasts SET reaction = \(value), reacted_at = \(reactedAt) WHERE id = \(id) RETURNING \(unescaped: Self.columns)
                """, logger: logger))
            try await outbox.enqueue(ContentEvents.RoastReacted(roastId: id.lowercased, userId: user.lowercased, category: current.category,
                                                                reaction: value, reactedAt: date),
                                     subject: user.lowercased, at: date, on: connection, logger: logger)
            return updated
        }
    }

    func share(_ id: UUID, user: UUID, channel: String, template: String?, localDate: String, at date: Date) async throws -> Roast? {
        try await change(id, user: user, changed: { _ in true }) { current, connection in
            let updated = try await first(connection.query("""
                UPDATE content.roasts SET shares = shares + 1 WHERE id = \(id) RETURNING \(unescaped: Self.columns)
                """, logger: logger))
            try await outbox.enqueue(ContentEvents.RoastShared(roastId: id.lowercased, userId: user.lowercased, category: current.category, channel: channel,
                                                               template: template, localDate: localDate, sharedAt: date),
                                     subject: user.lowercased, at: date, on: connection, logger: logger)
            return updated
        }
    }

    /// Locks the user's roast; when `changed` says the change changes it, `update` applies and announces it.
    private func change(_ id: UUID, user: UUID, changed: @escaping @Sendable (Roast) -> Bool,
                        update: @escaping @Sendable (Roast, PostgresConnection) async throws -> Roast?) async throws -> Roast? {
        // The widget's roast of the day becomes the user's on its first use by id.
        guard try await roast(id, of: user) != nil else { return nil }
        let (roast, announced): (Roast?, Bool) = try await client.transaction(logger: logger) { connection in
            let current = try await first(connection.query("""
                SELECT \(unescaped: Self.columns) FROM content.roasts WHERE id = \(id) AND user_id = \(user) FOR UPDATE
                """, logger: logger))
            guard let current else { return (nil, false) }
            guard changed(current) else { return (current, false) }
            return (try await update(current, connection), true)
        }
        if announced { outbox.committed() }
        return roast
    }

    /// A reward from `reward.unlocked`, in one statement that is its own idempotency (a reward is granted once) and
    /// does not bring an erased user back (it admits itself past the erasure fence, `ErasedUsers`).
    func grant(_ reward: String, user: UUID, at date: Date) async throws {
        try await client.query("""
            INSERT INTO content.roast_rewards (user_id, reward, granted_at)
            SELECT \(user), \(reward), \(date)
            WHERE content.admit_user(\(ErasedUsers.hash(user)))
            ON CONFLICT (user_id, reward) DO NOTHING
            """, logger: logger)
    }

    /// The user's roasts, reactions, favourites and rewards.
    func erase(_ user: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM content.roasts WHERE user_id = \(user)", logger: logger)
        try await connection.query("DELETE FROM content.roast_rewards WHERE user_id = \(user)", logger: logger)
    }
}
