import AsyncHTTPClient
import Foundation
import Testing
import LanternContracts
import LanternEvents
import LanternRedis
import LanternTestSupport
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import PostgresNIO

/// The real executables (every one of `Services/services.tsv`) started as processes on free ports, against the
/// test PostgreSQL and Redis, driven only through the gateway — as an app would. The push worker talks to fake
/// APNs / FCM servers of this test process (`push`), over TLS and HTTP/2 like the real ones.
/// The end-to-end suites run one at a time, and all but one on the same stack (`EndToEnd.Shared`, booted once):
/// a stack per suite cost a boot of every executable each, and suites side by side starved the in-process
/// servers of the other test targets on a 2-core machine (504s in the gateway's tests, whose fake upstream could
/// not answer within 10 s).
@Suite(.serialized) enum EndToEnd {}

final class Stack: @unchecked Sendable {
    let gateway: String
    let streams: StreamNames
    let push: FakePushServices
    /// The push worker's operations port (its metrics).
    var pushWorkerOperations = ""
    /// Each executable's operations port (`http://127.0.0.1:<port>`), by name.
    var operations: [String: String] = [:]
    /// Each executable's API port (`http://127.0.0.1:<port>`), by name: what the gateway forwards to.
    var apis: [String: String] = [:]
    /// Each executable's log file (standard output and error), by name.
    var logs: [String: URL] = [:]
    /// The stack's one database (every service's schema in it).
    var databaseURL = ""
    /// The folder of Symbi's evolution pictures (`SYMBI_STORAGE_DIR` of health-brain and evolution-worker).
    var symbiPictures = URL(fileURLWithPath: "/nonexistent")
    /// The fake models content's LLM layer calls, when the stack has them.
    var llm: FakeLLMServers?
    /// The test App Store whose root content trusts, when the stack has one.
    var appStore: TestAppStore?
    let http = HTTPClient(eventLoopGroupProvider: .singleton)
    private var processes: [Process] = []

    private init(gateway: String, streams: StreamNames, push: FakePushServices) {
        self.gateway = gateway
        self.streams = streams
        self.push = push
    }

    static var binPath: URL { ServiceList.binPath }

    /// The gazetteer `make test` writes (scripts/gazetteer.py); `LANTERN_PLACES_FILE` overrides.
    static var placesFile: String {
        ProcessInfo.processInfo.environment["LANTERN_PLACES_FILE"]
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent(".lantern/data/places.tsv").path
    }

    /// - Parameters:
    ///   - places: give `astrology` the gazetteer (it loads it and builds its search index before it is ready).
    ///   - llm: point content's LLM layer at these fake servers (model `gemini-2.5-flash`); they fail the test if a
    ///     prompt carries personal data. Without: content writes with its local grammars.
    ///   - content: more variables for content (e.g. the App Store root a test signs purchases with).
    ///   - environment: more variables by executable (e.g. identity's sign-in providers).
    static func run(places: Bool = false, llm: FakeLLMServers? = nil, content extra: [String: String] = [:],
                    environment: [String: [String: String]] = [:], _ body: @Sendable (Stack) async throws -> Void) async throws {
        let push = try await FakePushServices()
        guard let llm else {
            return try await push.serve { pushURL in
                try await run(push: push, pushURL: pushURL, places: places, content: extra, environment: environment, body)
            }
        }
        try await llm.run { geminiURL, _ in
            // A generous profile budget: a loaded machine must not turn the model's texts into artisanal ones.
            let content = ["GEMINI_API_KEY": llm.apiKey, "GEMINI_BASE_URL": geminiURL, "LLM_MODELS": "gemini:gemini-2.5-flash",
                           "PROFILE_BUDGET_SECONDS": "30"].merging(extra) { $1 }
            try await push.serve { pushURL in
                try await run(push: push, pushURL: pushURL, places: places, content: content, environment: environment, body)
            }
        }
    }

    private static func run(push: FakePushServices, pushURL: URL, places: Bool, content: [String: String],
                            environment: [String: [String: String]], _ body: @Sendable (Stack) async throws -> Void) async throws {
        try await TestEnvironment.withDatabase { databaseURL in
            let prefix = TestEnvironment.uniquePrefix()
            // Every executable of the one list, in its order, each on a free port (and a free operations port);
            // every `<NAME>_URL` points at the API port.
            let services = try ServiceList.load()
            var ports: [String: Int] = [:], operationsPorts: [String: Int] = [:]
            for service in services { ports[service.name] = try freePort(); operationsPorts[service.name] = try freePort() }
            var common = ["DATABASE_URL": databaseURL, "REDIS_URL": TestEnvironment.redisURL, "STREAM_PREFIX": prefix,
                          "HTTP_HOST": "127.0.0.1", "LOG_LEVEL": "notice"]
            for service in services { if let variable = service.urlVariable { common[variable] = "http://127.0.0.1:\(ports[service.name] ?? 0)" } }
            // Every service may ask identity for a service token (content → astrology).
            common["SERVICE_SECRET"] = "e2e-service-secret-\(prefix)"
            common["SERVICE_SECRETS"] = services.map { "\($0.name)=e2e-service-secret-\(prefix)" }.joined(separator: ",")
            let storage = FileManager.default.temporaryDirectory.appendingPathComponent("lantern-e2e-\(prefix)")
            defer { try? FileManager.default.removeItem(at: storage) }
            try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
            let keyFile = storage.appendingPathComponent("AuthKey.p8")
            try push.apnsKeyPEM.write(to: keyFile, atomically: true, encoding: .utf8)
            let accountFile = storage.appendingPathComponent("service-account.json")
            try push.serviceAccountJSON(baseURL: pushURL).write(to: accountFile)
            // What this harness sets beyond the common variables, by executable.
            let extra: [String: [String: String]] = [
                // Pairly accounts come from Google in production; device accounts keep the journey self-contained.
                "identity": ["DEVICE_SIGNIN_APPS": "luckyday,astrosvitla,roastmelater,symbi,pairly"],
                "media": ["MEDIA_STORAGE_DIR": storage.path],
                // One folder for Symbi's pictures: evolution-worker writes them, health-brain serves them.
                "health-brain": ["SYMBI_STORAGE_DIR": storage.appendingPathComponent("symbi").path],
                "evolution-worker": ["SYMBI_STORAGE_DIR": storage.appendingPathComponent("symbi").path],
                "push-worker": ["APNS_KEY_FILE": keyFile.path, "APNS_KEY_ID": push.apnsKeyID, "APNS_TEAM_ID": push.teamID,
                                "APNS_URL": pushURL.absoluteString, "FCM_SERVICE_ACCOUNT_FILE": accountFile.path, "FCM_URL": pushURL.absoluteString,
                                "PUSH_TRUST_ROOTS_FILE": try push.tls.writeCA(to: storage)],
                "astrology": ["CHART_FINGERPRINT_KEY": "e2e-chart-fingerprint-\(prefix)"].merging(places ? ["PLACES_FILE": placesFile] : [:]) { $1 },
                "content": content,
            ]
            let stack = Stack(gateway: "http://127.0.0.1:\(ports["gateway"] ?? 0)", streams: StreamNames(prefix: prefix), push: push)
            stack.pushWorkerOperations = "http://127.0.0.1:\(operationsPorts["push-worker"] ?? 0)"
            stack.operations = operationsPorts.mapValues { "http://127.0.0.1:\($0)" }
            stack.apis = ports.mapValues { "http://127.0.0.1:\($0)" }
            stack.databaseURL = databaseURL
            stack.symbiPictures = storage.appendingPathComponent("symbi")
            do {
                for service in services {
                    let port = ports[service.name] ?? 0, operationsPort = operationsPorts[service.name] ?? 0
                    // Each executable signs in to Redis as itself, with its own rights only (RedisAccess).
                    let redis = ["REDIS_URL": try await TestEnvironment.redisURL(for: service.name, prefix: prefix)]
                    try stack.start(service.name, environment: common.merging(redis) { $1 }.merging(extra[service.name] ?? [:]) { $1 }
                        .merging(environment[service.name] ?? [:]) { $1 }
                        .merging(["HTTP_PORT": String(port), "OPS_PORT": String(operationsPort)]) { $1 })
                    try await stack.waitReady("http://127.0.0.1:\(operationsPort)/health/ready", process: service.name)
                }
                try await body(stack)
            } catch {
                await stack.stop()
                try? await stack.http.shutdown()
                throw error
            }
            await stack.stop()
            try await stack.http.shutdown()
        }
    }

    private func start(_ name: String, environment: [String: String]) throws {
        let process = Process()
        process.executableURL = Self.binPath.appendingPathComponent(name)
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        process.environment = env
        let logs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".lantern/e2e-logs")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        let log = logs.appendingPathComponent("\(name)-\(environment["HTTP_PORT"] ?? "").log")
        self.logs[name] = log
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        processes.append(process)
    }

    private func waitReady(_ url: String, process name: String) async throws {
        for _ in 0..<300 {
            if let process = processes.last, !process.isRunning {
                throw StackError("\(name) exited with status \(process.terminationStatus) before becoming ready (see .lantern/e2e-logs)")
            }
            if let response = try? await http.execute(HTTPClientRequest(url: url), timeout: .seconds(1)), response.status == .ok { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw StackError("\(url) did not become ready")
    }

    /// SIGTERM, so the executables shut down gracefully; whatever still runs after 10 s is killed and reported
    /// (a graceful shutdown that hangs is a bug worth seeing, but must not leak processes into later tests).
    func stop() async {
        let running = processes.filter(\.isRunning)
        processes = []
        for process in running { process.terminate() }
        let deadline = ContinuousClock.now + .seconds(10)
        while running.contains(where: \.isRunning), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(100)) }
        for process in running where process.isRunning {
            FileHandle.standardError.write(Data("e2e: \(process.executableURL?.lastPathComponent ?? "?") did not stop within 10 s of SIGTERM; killing it\n".utf8))
            kill(process.processIdentifier, SIGKILL)
        }
    }

    /// How many identity events the push worker has handled (from its operations port's /metrics), to know its
    /// registry is current.
    func pushWorkerIdentityEventsHandled() async throws -> Int {
        let response = try await http.execute(HTTPClientRequest(url: pushWorkerOperations + "/metrics"), timeout: .seconds(5))
        let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
        let line = text.split(separator: "\n").first {
            $0.hasPrefix("lantern_events_handled_total{") && $0.contains("\(streams.events("identity"))") && $0.contains("push-worker") && $0.contains("result=\"ok\"")
        }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) } ?? 0
    }

    struct Reply: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: Data
        func json<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder().decode(T.self, from: body) }
        var text: String { String(decoding: body, as: UTF8.self) }
        var problemCode: String? { (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["code"] as? String }
    }

    /// - Parameter service: call that executable's own API port instead of the gateway.
    func call(_ method: HTTPMethod, _ path: String, token: String? = nil, json: String? = nil, contentType: String = "application/json",
              bytes: [UInt8]? = nil, headers: [(String, String)] = [], service: String? = nil) async throws -> Reply {
        var request = HTTPClientRequest(url: (service.map { apis[$0, default: ""] } ?? gateway) + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let json {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(string: json))
        }
        if let bytes {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(bytes: bytes))
        }
        let response = try await http.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Data(buffer: body))
    }
}

struct StackError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Stack {
    /// Every `schema.table.column` of every service whose value contains `id` (any case): after an account is
    /// deleted, only the documented tombstones may name it.
    func columnsNaming(_ id: String) async throws -> [String] {
        try await TestEnvironment.withPostgres(databaseURL) { client in
            let columns = try await client.query("""
                SELECT c.table_schema, c.table_name, c.column_name FROM information_schema.columns c
                JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
                WHERE t.table_type = 'BASE TABLE' AND c.table_schema NOT IN ('pg_catalog', 'information_schema', 'public')
                  AND c.data_type IN ('text', 'uuid', 'jsonb', 'json', 'character varying', 'bytea')
                """)
            var found: [String] = []
            for try await (schema, table, column) in columns.decode((String, String, String).self) {
                let sql = "SELECT count(*) FROM \"\(schema)\".\"\(table)\" WHERE \"\(column)\"::text ILIKE '%\(id)%'"
                for try await count in try await client.query(PostgresQuery(unsafeSQL: sql)).decode(Int.self) where count > 0 {
                    found.append("\(schema).\(table).\(column)")
                }
            }
            return found
        }
    }
}
