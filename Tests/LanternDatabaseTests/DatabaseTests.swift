import Foundation
import LanternCore
import LanternDatabase
import LanternTestSupport
import PostgresNIO
import Testing

private let logger = TestEnvironment.logger

/// The first column of every row of `sql`, as integers.
private func ints(_ client: PostgresClient, _ sql: String) async throws -> [Int] {
    var result: [Int] = []
    for try await n in try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(Int.self) { result.append(n) }
    return result
}

private func strings(_ client: PostgresClient, _ sql: String) async throws -> [String] {
    var result: [String] = []
    for try await s in try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(String.self) { result.append(s) }
    return result
}

private struct CodeExpired: Error, Equatable {}

@Suite("LanternDatabase: SQL scripts")
struct SQLScriptTests {
    @Test("SQLScript splits on semicolons but not inside strings (E'' too), quoted identifiers, comments (-- and nested /* */) or dollar-quoted bodies")
    func statements() {
        let script = """
            CREATE TABLE a (x text DEFAULT 'a;b');
            -- a comment; with a semicolon
            INSERT INTO a VALUES ('it''s; fine');
            SELECT 1, -- one; two
            2;
            CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END; $$;
            DO $body$ BEGIN PERFORM 'x;y'; PERFORM $$;$$; END $body$;
            ;;
            SELECT $1
            """
        #expect(SQLScript.statements(script) == [
            "CREATE TABLE a (x text DEFAULT 'a;b')",
            "INSERT INTO a VALUES ('it''s; fine')",
            "SELECT 1, \n2",
            "CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END; $$",
            "DO $body$ BEGIN PERFORM 'x;y'; PERFORM $$;$$; END $body$",
            "SELECT $1",
        ])
        #expect(SQLScript.statements("/* one; two /* nested; */ still; */ SELECT 1; SELECT 2") == ["SELECT 1", "SELECT 2"])
        #expect(SQLScript.statements(#"CREATE TABLE "a;b" (n int); SELECT 1"#) == [#"CREATE TABLE "a;b" (n int)"#, "SELECT 1"])
        #expect(SQLScript.statements(#"SELECT E'it\'s; x'; SELECT 'a\'; SELECT 2"#) == [#"SELECT E'it\'s; x'"#, #"SELECT 'a\'"#, "SELECT 2"])
        #expect(SQLScript.statements("") == [])
        #expect(SQLScript.statements("  -- only a comment; really\n ; ") == [])
    }
}

@Suite("LanternDatabase against the test PostgreSQL")
struct DatabaseTests {
    @Test("a LocalDay binds and reads as PostgreSQL's date: the same day as PostgreSQL prints it, around its epoch, leap days and centuries")
    func localDays() async throws {
        try await TestEnvironment.withDatabase { url in
            try await TestEnvironment.withPostgres(url) { client async throws in
                let days = ["2000-01-01", "1999-12-31", "1970-01-01", "2024-02-29", "2100-03-01", "1900-02-28", "0001-01-01", "9999-12-31",
                            "2026-11-27"].compactMap(LocalDay.init)
                #expect(days.count == 9)
                for day in days {
                    let rows = try await client.query("SELECT \(day)::text, \(day.description)::date, \(day) - DATE '2000-01-01'", logger: logger)
                    for try await (printed, parsed, offset) in rows.decode((String, LocalDay, Int).self) {
                        #expect(printed == day.description && parsed == day)
                        #expect(offset == day.julianDayNumber - 2_451_545)
                    }
                }
                let missing = try await client.query("SELECT NULL::date", logger: logger)
                for try await day in missing.decode(LocalDay?.self) { #expect(day == nil) }
            }
        }
    }

    @Test("transaction commits when the body returns and rolls back when it throws, rethrowing the body's own error")
    func transactions() async throws {
        try await TestEnvironment.withDatabase { url in
            try await TestEnvironment.withPostgres(url) { client async throws in
                try await client.query("CREATE TABLE t (n int NOT NULL)", logger: logger)
                let value = try await client.transaction(logger: logger) { connection in
                    try await connection.query("INSERT INTO t VALUES (\(1))", logger: logger)
                    try await connection.query("INSERT INTO t VALUES (\(2))", logger: logger)
                    return 7
                }
                #expect(value == 7)
                #expect(try await ints(client, "SELECT n FROM t ORDER BY n") == [1, 2])

                await #expect(throws: CodeExpired()) {
                    try await client.transaction(logger: logger) { connection -> Void in
                        try await connection.query("INSERT INTO t VALUES (\(3))", logger: logger)
                        try await connection.query("DELETE FROM t WHERE n = \(1)", logger: logger)
                        throw CodeExpired()
                    }
                }
                #expect(try await ints(client, "SELECT n FROM t ORDER BY n") == [1, 2])
            }
        }
    }

    @Test("Migrator applies migrations once, in order, with {{schema}} replaced, and is a no-op the second time")
    func migrate() async throws {
        try await TestEnvironment.withDatabase { url in
            try await TestEnvironment.withPostgres(url) { client async throws in
                var migrations = [
                    Migration(id: "0001_items", sql: """
                        CREATE TABLE {{schema}}.items (n int NOT NULL); -- the table; first
                        CREATE FUNCTION {{schema}}.next_n() RETURNS int LANGUAGE plpgsql AS $$
                        BEGIN RETURN (SELECT coalesce(max(n), 0) + 1 FROM {{schema}}.items); END; $$;
                        """),
                    // Depends on 0001: fails if applied out of order.
                    Migration(id: "0002_seed", sql: "INSERT INTO {{schema}}.items VALUES ({{schema}}.next_n()); INSERT INTO {{schema}}.items VALUES ({{schema}}.next_n());"),
                ]
                #expect(try await Migrator.migrate(schema: "shop", migrations: migrations, client: client, logger: logger) == ["0001_items", "0002_seed"])
                #expect(try await ints(client, "SELECT n FROM shop.items ORDER BY n") == [1, 2])
                #expect(try await strings(client, "SELECT id FROM shop.schema_migrations ORDER BY id") == ["0001_items", "0002_seed"])

                #expect(try await Migrator.migrate(schema: "shop", migrations: migrations, client: client, logger: logger) == [])
                #expect(try await ints(client, "SELECT n FROM shop.items ORDER BY n") == [1, 2])

                migrations.append(Migration(id: "0003_more", sql: "INSERT INTO {{schema}}.items VALUES ({{schema}}.next_n())"))
                #expect(try await Migrator.migrate(schema: "shop", migrations: migrations, client: client, logger: logger) == ["0003_more"])
                #expect(try await ints(client, "SELECT n FROM shop.items ORDER BY n") == [1, 2, 3])

                // The same migrations in another schema are that schema's own.
                #expect(try await Migrator.migrate(schema: "other", migrations: migrations, client: client, logger: logger).count == 3)
                #expect(try await ints(client, "SELECT n FROM other.items ORDER BY n") == [1, 2, 3])
            }
        }
    }

    @Test("a failing migration leaves nothing behind: no schema, no tables, no recorded versions")
    func failingMigration() async throws {
        try await TestEnvironment.withDatabase { url in
            try await TestEnvironment.withPostgres(url) { client async throws in
                let migrations = [
                    Migration(id: "0001_ok", sql: "CREATE TABLE {{schema}}.fine (n int)"),
                    Migration(id: "0002_bad", sql: "CREATE TABLE {{schema}}.broken (n no_such_type)"),
                ]
                await #expect(throws: PSQLError.self) {
                    try await Migrator.migrate(schema: "shaky", migrations: migrations, client: client, logger: logger)
                }
                #expect(try await ints(client, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'shaky'") == [0])
                #expect(try await Migrator.migrate(schema: "shaky", migrations: Array(migrations.prefix(1)), client: client, logger: logger) == ["0001_ok"])
            }
        }
    }

    @Test("Housekeeping.runOnce deletes rows older than keep by the injected clock and reports the count per rule")
    func housekeeping() async throws {
        try await TestEnvironment.withDatabase { url in
            try await TestEnvironment.withPostgres(url) { client async throws in
                // A "now" well ahead of the real clock: a cutoff taken from the database or the system clock deletes nothing.
                let now = Date(timeIntervalSince1970: 1_900_000_000)
                let time = ManualTime(now)
                try await client.query("CREATE TABLE tokens (id int NOT NULL, created_at timestamptz NOT NULL)", logger: logger)
                try await client.query("CREATE TABLE keys (id int NOT NULL, used_at timestamptz NOT NULL)", logger: logger)
                for (id, age) in [(1, 10.0), (2, 3599.0), (3, 3601.0), (4, 7200.0)] {
                    try await client.query("INSERT INTO tokens VALUES (\(id), \(now.addingTimeInterval(-age)))", logger: logger)
                }
                for (id, age) in [(1, 10.0), (2, 1000.0)] {
                    try await client.query("INSERT INTO keys VALUES (\(id), \(now.addingTimeInterval(-age)))", logger: logger)
                }
                let housekeeping = Housekeeping(client: client, rules: [
                    .init("broken", sql: "DELETE FROM no_such_table WHERE at < $1", keep: 0),
                    .init("tokens", sql: "DELETE FROM tokens WHERE created_at < $1", keep: 3600),
                    .init("keys", sql: "DELETE FROM keys WHERE used_at < $1", keep: 2 * 3600),
                ], clock: .manual(time), logger: logger)

                // A failing rule is left out of the report and does not stop the others.
                #expect(await housekeeping.runOnce() == ["tokens": 2, "keys": 0])
                #expect(try await ints(client, "SELECT id FROM tokens ORDER BY id") == [1, 2])
                #expect(await housekeeping.runOnce() == ["tokens": 0, "keys": 0])

                time.advance(by: 3600)
                #expect(await housekeeping.runOnce() == ["tokens": 2, "keys": 0])
                time.advance(by: 3600)
                #expect(await housekeeping.runOnce() == ["tokens": 0, "keys": 2])
                #expect(try await ints(client, "SELECT count(*) FROM tokens") == [0])
            }
        }
    }

    @Test("lantern(url:) reads a postgres URL and rejects a malformed one with a ConfigurationError naming DATABASE_URL")
    func configuration() throws {
        let configuration = try PostgresClient.Configuration.lantern(url: "postgresql://app:p%40ss@db.internal:6543/lantern?pool=7")
        #expect(configuration.host == "db.internal")
        #expect(configuration.port == 6543)
        #expect(configuration.username == "app")
        #expect(configuration.password == "p@ss")
        #expect(configuration.database == "lantern")
        #expect(configuration.options.maximumConnections == 7 && configuration.options.minimumConnections == 7)
        let defaults = try PostgresClient.Configuration.lantern(url: "postgres://app@localhost")
        #expect(defaults.port == 5432)
        #expect(defaults.options.minimumConnections == 0 && defaults.options.keepAliveBehavior == nil)
        #expect(defaults.database == nil)

        for bad in ["mysql://app@localhost/lantern", "not a url", "postgres://localhost/lantern", "postgres://app:secret@/lantern",
                    "postgres://app@localhost/lantern?sslmode=verify-full", "postgres://app@localhost/lantern?pool=0"] {
            let error = #expect(throws: ConfigurationError.self, "\(bad)") { try PostgresClient.Configuration.lantern(url: bad) }
            #expect(error?.variable == "DATABASE_URL", "\(bad)")
            #expect(error?.description.contains("DATABASE_URL") == true)
            #expect(error?.description.contains("secret") == false, "the password is redacted")
        }
        let named = #expect(throws: ConfigurationError.self) { try PostgresClient.Configuration.lantern(url: "nope", variable: "EVENTS_DATABASE_URL") }
        #expect(named?.variable == "EVENTS_DATABASE_URL")
    }
}
