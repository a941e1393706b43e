import Foundation
import LanternCore
import LanternDatabase
import Logging
import PostgresNIO

/// RoastMeLater's collections (`content.roast_collections`, a JSON definition per row) and their audit trail
/// (`content.roast_collection_changes`): every change and its record commit together.
struct CollectionStore: CollectionRecords {
    let client: PostgresClient
    let logger: Logger

    static let columns = "id, definition::text, retired, version, updated_at, updated_by"

    static func decode(_ row: PostgresRow) throws -> StoredCollection {
        let (id, definition, retired, version, updatedAt, updatedBy) = try row.decode((String, String, Bool, Int, Date, String).self)
        let collection: RoastCollection
        do { collection = try JSONDecoder().decode(RoastCollection.self, from: Data(definition.utf8)) } catch {
            throw StoreInconsistency("content.roast_collections \(id): \(error)")
        }
        return StoredCollection(collection: collection, retired: retired, version: version, updatedAt: updatedAt, updatedBy: updatedBy)
    }

    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    func seed(_ collections: [RoastCollection], at date: Date) async throws {
        for collection in collections {
            let definition = try Self.json(collection)
            try await client.transaction(logger: logger) { connection in
                let inserted = try await connection.query("""
                    INSERT INTO content.roast_collections (id, definition, version, updated_at, updated_by)
                    VALUES (\(collection.id), \(definition)::jsonb, 1, \(date), 'catalogue')
                    ON CONFLICT (id) DO NOTHING RETURNING id
                    """, logger: logger)
                for try await _ in inserted {
                    try await record(CollectionChange(action: "created", collectionID: collection.id, version: 1, operatorName: "catalogue", at: date,
                                                      fields: Self.changes(from: nil, to: collection)), on: connection)
                }
            }
        }
    }

    func all() async throws -> [StoredCollection] {
        var result: [StoredCollection] = []
        for try await row in try await client.query("SELECT \(unescaped: Self.columns) FROM content.roast_collections ORDER BY id", logger: logger) {
            result.append(try Self.decode(row))
        }
        return result
    }

    func collection(_ id: String) async throws -> StoredCollection? {
        for try await row in try await client.query("SELECT \(unescaped: Self.columns) FROM content.roast_collections WHERE id = \(id)", logger: logger) {
            return try Self.decode(row)
        }
        return nil
    }

    func create(_ collection: RoastCollection, by operatorName: String, at date: Date) async throws -> StoredCollection? {
        let definition = try Self.json(collection)
        return try await client.transaction(logger: logger) { connection in
            let rows = try await connection.query("""
                INSERT INTO content.roast_collections (id, definition, version, updated_at, updated_by)
                VALUES (\(collection.id), \(definition)::jsonb, 1, \(date), \(operatorName))
                ON CONFLICT (id) DO NOTHING RETURNING \(unescaped: Self.columns)
                """, logger: logger)
            for try await row in rows {
                try await record(CollectionChange(action: "created", collectionID: collection.id, version: 1, operatorName: operatorName, at: date,
                                                  fields: Self.changes(from: nil, to: collection)), on: connection)
                return try Self.decode(row)
            }
            return nil
        }
    }

    func update(_ id: String, expectedVersion: Int?, by operatorName: String, at date: Date,
                change: @escaping @Sendable (StoredCollection) -> (RoastCollection, retired: Bool)) async throws -> CollectionUpdate {
        try await client.transaction(logger: logger) { connection in
            var current: StoredCollection?
            for try await row in try await connection.query("""
                SELECT \(unescaped: Self.columns) FROM content.roast_collections WHERE id = \(id) FOR UPDATE
                """, logger: logger) {
                current = try Self.decode(row)
            }
            guard let current else { return .missing }
            if let expectedVersion, expectedVersion != current.version { return .stale(current: current.version) }
            let (collection, retired) = change(current)
            var fields = Self.changes(from: current.collection, to: collection)
            if retired != current.retired { fields["retired"] = .init(before: .bool(current.retired), after: .bool(retired)) }
            guard !fields.isEmpty else { return .unchanged(current) }
            let version = current.version + 1
            let definition = try Self.json(collection)
            var updated: StoredCollection?
            for try await row in try await connection.query("""
                UPDATE content.roast_collections SET definition = \(definition)::jsonb, retired = \(retired), version = \(version),
                       updated_at = \(date), updated_by = \(operatorName)
                WHERE id = \(id) RETURNING \(unescaped: Self.columns)
                """, logger: logger) {
                updated = try Self.decode(row)
            }
            guard let updated else { throw StoreInconsistency("content.roast_collections \(id) vanished under its row lock") }
            let action = fields.count == 1 && fields["retired"] != nil ? (retired ? "retired" : "restored") : "edited"
            try await record(CollectionChange(action: action, collectionID: id, version: version, operatorName: operatorName, at: date, fields: fields),
                             on: connection)
            return .saved(updated)
        }
    }

    func changes(of id: String) async throws -> [CollectionChange] {
        var result: [CollectionChange] = []
        for try await row in try await client.query("""
            SELECT action, version, operator, at, fields::text FROM content.roast_collection_changes
            WHERE collection_id = \(id) ORDER BY id DESC LIMIT 200
            """, logger: logger) {
            let (action, version, operatorName, at, fields) = try row.decode((String, Int, String, Date, String).self)
            let decoded = try JSONDecoder().decode([String: CollectionChange.FieldChange].self, from: Data(fields.utf8))
            result.append(CollectionChange(action: action, collectionID: id, version: version, operatorName: operatorName, at: at, fields: decoded))
        }
        return result
    }

    func progress(of user: UUID) async throws -> [String: Set<String>] {
        var result: [String: Set<String>] = [:]
        for try await (collection, scenario) in try await client.query("""
            SELECT DISTINCT collection, scenario FROM content.roasts WHERE user_id = \(user) AND collection IS NOT NULL AND scenario IS NOT NULL
            """, logger: logger).decode((String, String).self) {
            result[collection, default: []].insert(scenario)
        }
        return result
    }

    private func record(_ change: CollectionChange, on connection: PostgresConnection) async throws {
        let fields = try Self.json(change.fields)
        try await connection.query("""
            INSERT INTO content.roast_collection_changes (collection_id, version, action, operator, at, fields)
            VALUES (\(change.collectionID), \(change.version), \(change.action), \(change.operatorName), \(change.at), \(fields)::jsonb)
            """, logger: logger)
    }

    /// The top-level fields of the definition that differ, each before and after (as JSON).
    static func changes(from before: RoastCollection?, to after: RoastCollection) -> [String: CollectionChange.FieldChange] {
        func object(_ collection: RoastCollection?) -> [String: JSONValue] {
            guard let collection, let data = try? JSONEncoder().encode(collection),
                  case .object(let fields)? = try? JSONDecoder().decode(JSONValue.self, from: data) else { return [:] }
            return fields
        }
        let old = object(before), new = object(after)
        var result: [String: CollectionChange.FieldChange] = [:]
        for key in Set(old.keys).union(new.keys) where old[key] != new[key] {
            result[key] = .init(before: old[key], after: new[key])
        }
        return result
    }
}
