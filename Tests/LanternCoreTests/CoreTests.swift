import Foundation
@testable import LanternCore
import Testing

@Suite("Configuration")
struct SettingsTests {
    @Test("a bad value stops start-up with the variable's name")
    func badPort() {
        let settings = Settings.fixed(["HTTP_PORT": "eighty"])
        #expect {
            _ = try ProcessSettings(serviceName: "x", settings: settings, defaultPort: 1)
        } throws: { error in
            (error as? ConfigurationError)?.variable == "HTTP_PORT" && "\(error)".contains("eighty")
        }
    }

    @Test("defaults apply when a variable is unset; values parse when set")
    func defaults() throws {
        let unset = try ProcessSettings(serviceName: "x", settings: .fixed([:]), defaultPort: 8081)
        #expect(unset.port == 8081 && unset.host == "127.0.0.1" && unset.logLevel == .info)
        let set = try ProcessSettings(serviceName: "x", settings: .fixed(["HTTP_PORT": "9000", "HTTP_HOST": "0.0.0.0", "LOG_LEVEL": "debug"]), defaultPort: 1)
        #expect(set.port == 9000 && set.host == "0.0.0.0" && set.logLevel == .debug)
    }

    @Test("the operations listener defaults to HTTP_PORT + 1000 on HTTP_HOST, may be set apart, and never shares the API's port")
    func operationsPort() throws {
        let unset = try ProcessSettings(serviceName: "x", settings: .fixed([:]), defaultPort: 8081)
        #expect(unset.operationsPort == 9081 && unset.operationsHost == "127.0.0.1")
        let any = try ProcessSettings(serviceName: "x", settings: .fixed(["HTTP_PORT": "0"]), defaultPort: 8081)
        #expect(any.operationsPort == 0)
        let set = try ProcessSettings(serviceName: "x", settings: .fixed(["HTTP_HOST": "0.0.0.0", "OPS_PORT": "7001", "OPS_HOST": "10.0.0.5"]), defaultPort: 8081)
        #expect(set.operationsPort == 7001 && set.operationsHost == "10.0.0.5" && set.host == "0.0.0.0")
        for variables in [["HTTP_PORT": "8081", "OPS_PORT": "8081"], ["HTTP_PORT": "65000"], ["OPS_PORT": "ops"]] {
            #expect {
                _ = try ProcessSettings(serviceName: "x", settings: .fixed(variables), defaultPort: 8081)
            } throws: { ($0 as? ConfigurationError)?.variable == "OPS_PORT" }
        }
    }

    @Test("a secret comes from its variable or from the file <VARIABLE>_FILE names, never both; a missing required one names both")
    func secretsFromFiles() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("lantern-secret-\(UUID().uuidString)")
        try "postgres://u:from-file@h/db\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try Settings.fixed(["DATABASE_URL_FILE": file.path]).requiredSecret("database.url") == "postgres://u:from-file@h/db")
        #expect(try Settings.fixed(["DATABASE_URL": "postgres://u:plain@h/db"]).requiredSecret("database.url") == "postgres://u:plain@h/db")
        #expect(try Settings.fixed(["SERVICE_SECRETS_FILE": file.path]).secretList("service.secrets") == ["postgres://u:from-file@h/db"])
        #expect(try Settings.fixed([:]).secret("gemini.api.key") == nil)
        #expect {
            _ = try Settings.fixed(["DATABASE_URL": "x", "DATABASE_URL_FILE": file.path]).secret("database.url")
        } throws: { ($0 as? ConfigurationError)?.variable == "DATABASE_URL_FILE" && "\($0)".contains("both") }
        #expect {
            _ = try Settings.fixed(["DATABASE_URL_FILE": "/nonexistent/secret"]).secret("database.url")
        } throws: { ($0 as? ConfigurationError)?.variable == "DATABASE_URL_FILE" && "\($0)".contains("/nonexistent/secret") }
        #expect {
            _ = try Settings.fixed([:]).requiredSecret("database.url")
        } throws: { ($0 as? ConfigurationError)?.variable == "DATABASE_URL" && "\($0)".contains("DATABASE_URL_FILE") }
    }

    @Test("LANTERN_ENVIRONMENT is production unless it says development")
    func environment() throws {
        #expect(try ProcessSettings(serviceName: "x", settings: .fixed([:]), defaultPort: 1).environment == .production)
        #expect(try ProcessSettings(serviceName: "x", settings: .fixed(["LANTERN_ENVIRONMENT": "Development"]), defaultPort: 1).environment == .development)
        #expect {
            _ = try ProcessSettings(serviceName: "x", settings: .fixed(["LANTERN_ENVIRONMENT": "staging"]), defaultPort: 1)
        } throws: { ($0 as? ConfigurationError)?.variable == "LANTERN_ENVIRONMENT" }
    }

    @Test("secrets in URLs are redacted from messages")
    func redaction() {
        #expect(Settings.redacted("postgres://u:hunter2@h:5432/db") == "postgres://u:***@h:5432/db")
        #expect(throws: ConfigurationError.self) { try Settings.fixed(["X_URL": "ftp://u:hunter2@h"]).url("x.url", schemes: ["http"]) }
        do {
            _ = try Settings.fixed(["X_URL": "ftp://u:hunter2@h"]).url("x.url", schemes: ["http"])
        } catch {
            #expect(!"\(error)".contains("hunter2"))
        }
    }
}

@Suite("Problems and ids")
struct ProblemTests {
    @Test("validation problems list every field")
    func validator() {
        var v = FieldValidator()
        v.check(false, "a", "bad a")
        v.check(true, "b", "fine")
        v.fail("c.d", "bad c.d")
        #expect(throws: Problem.invalid([.init(field: "a", message: "bad a"), .init(field: "c.d", message: "bad c.d")])) { try v.validate() }
    }

    @Test("a 422 with many bad fields lists every one in errors; its detail names the first three and counts the rest")
    func manyFields() {
        let errors = (0..<40).map { Problem.FieldError(field: "days[\($0)].date", message: "is more than 29 days ago: the pet keeps 30 days of history") }
        let problem = Problem.invalid(errors)
        #expect(problem.errors?.count == 40)
        #expect(problem.detail?.hasPrefix("days[0].date: is more than 29 days ago") == true)
        #expect(problem.detail?.hasSuffix("days[2].date: is more than 29 days ago: the pet keeps 30 days of history; and 37 more (every one is in errors)") == true)
        #expect((problem.detail?.count ?? 0) < 300)
        #expect(Problem.invalid(Array(errors.prefix(3))).detail?.contains("every one is in errors") == false)
    }

    @Test("problem JSON has the RFC 9457 members and a stable code")
    func problemJSON() throws {
        let data = try JSONEncoder.lantern.encode(Problem.tooManyRequests(retryAfter: 7))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["status"] as? Int == 429)
        #expect(object["code"] as? String == "rate_limited")
        #expect(object["type"] as? String == "https://lantern.dev/problems/rate-limited")
        #expect(object["retryAfter"] == nil)
    }

    @Test("UUID v7 carries its time and sorts by it")
    func uuidV7() {
        let a = UUID.v7(at: Date(timeIntervalSince1970: 1_700_000_000))
        let b = UUID.v7(at: Date(timeIntervalSince1970: 1_700_000_001))
        #expect(a.lowercased < b.lowercased)
        #expect(a.lowercased.dropFirst(14).first == "7")
        #expect(["8", "9", "a", "b"].contains(a.lowercased.dropFirst(19).first.map(String.init)))
        // Written from the bytes, the text is Foundation's, lower-cased.
        for id in [a, b, UUID(), UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                   UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))] + (0..<200).map({ _ in UUID() }) {
            #expect(id.lowercased == id.uuidString.lowercased() && UUID(uuidString: id.lowercased) == id)
        }
    }

    @Test("RFC 3339 timestamps keep milliseconds in UTC")
    func timestamps() {
        let date = Date(timeIntervalSince1970: 1_767_268_800.123)
        #expect(RFC3339.string(from: date) == "2026-01-01T12:00:00.123Z")
        #expect(RFC3339.date(from: "2026-01-01T12:00:00.123Z").map { abs($0.timeIntervalSince(date)) < 0.001 } == true)
        #expect(RFC3339.date(from: "2026-01-01T14:00:00+02:00").map { abs($0.timeIntervalSince1970 - 1_767_268_800) < 0.001 } == true)
        // Written from the numbers, the text is Foundation's ISO 8601 style's: leap days, the turn of centuries,
        // before 1970, the rounding of milliseconds, random instants from year 1 (Julian before 1583) to 9999.
        var samples: [Double] = [0, -0.0004, -0.0006, 0.0004999, 0.9995, 59.9996, 951_782_400, 4_107_542_399.9999, -2_208_988_800,
                                 -62_135_596_800, 253_402_300_799.999, 1_767_268_800.123, 1_709_164_800.5]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3_000 { samples.append(Double.random(in: -62_135_596_800 ..< 253_402_300_799, using: &generator)) }
        for _ in 0..<1_000 { samples.append(Double(Int.random(in: 0..<4_102_444_800, using: &generator)) + Double(Int.random(in: 0..<1000)) / 1000) }
        for seconds in samples {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(RFC3339.string(from: date) == RFC3339.formatted(date), "\(seconds)")
        }
    }

    @Test("HTTP dates written from the numbers are the formatter's IMF-fixdate")
    func httpDates() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        #expect(HTTPDate.string(from: Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        var samples: [Double] = [0, -1, 59.999, 951_782_400, 4_107_542_399.5, -2_208_988_800, -12_212_553_600, 253_402_300_799, -62_135_596_800]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3_000 { samples.append(Double.random(in: -62_135_596_800 ..< 253_402_300_799, using: &generator)) }
        for seconds in samples {
            // An HTTP date is a whole second, the fraction dropped (the formatter rounds the last millisecond up).
            let date = Date(timeIntervalSince1970: seconds.rounded(.down) + (seconds - seconds.rounded(.down)) * 0.99)
            #expect(HTTPDate.string(from: date) == formatter.string(from: date), "\(seconds)")
        }
    }

    @Test("the manual clock moves only when told")
    func manualClock() {
        let time = ManualTime(Date(timeIntervalSince1970: 0))
        let clock = WallClock.manual(time)
        time.advance(by: 90)
        #expect(clock.now() == Date(timeIntervalSince1970: 90))
    }
}

@Suite("Time-zone names")
struct TimeZoneNameTests {
    /// Every zone and link name of the tz database on this machine (`tzdata.zi`: `Z name …`, `L target name`).
    static func tzDatabaseNames() throws -> [String] {
        let text = try String(contentsOfFile: "/usr/share/zoneinfo/tzdata.zi", encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            if fields.first == "Z", fields.count > 1 { return String(fields[1]) }
            if fields.first == "L", fields.count > 2 { return String(fields[2]) }
            return nil
        }
    }

    @Test("every name of the tz database is valid, canonical names and backward links alike")
    func wholeDatabase() throws {
        let names = try Self.tzDatabaseNames()
        #expect(names.count > 500)
        #expect(names.filter { !TimeZoneName.isValid($0) } == [])
        for name in ["Asia/Kolkata", "Asia/Calcutta", "Europe/Kyiv", "Europe/Kiev", "Asia/Saigon", "US/Eastern", "Etc/UTC", "Etc/GMT+12", "UTC", "EST", "GMT+0"] {
            #expect(TimeZoneName.isValid(name), "\(name)")
        }
    }

    @Test("what is not a tz name is refused: unknown, wrong case, ICU's custom offsets, paths")
    func refused() {
        for name in ["Mars/Olympus", "asia/kolkata", "utc", "GMT+05:00", "GMT+5", "+05:30", "../etc/passwd", "", String(repeating: "A", count: 65)] {
            #expect(!TimeZoneName.isValid(name), "\(name)")
        }
    }
}
