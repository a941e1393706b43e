import Configuration
import Foundation
import Logging
import Synchronization

/// A start-up configuration mistake, naming the environment variable so an operator can fix it at once.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public let variable: String
    public let message: String
    public init(variable: String, message: String) {
        self.variable = variable
        self.message = message
    }
    public var description: String { "configuration error: \(variable) \(message)" }
}

/// Typed, validated reads of configuration keys over swift-configuration.
///
/// Keys are written dotted (`http.port`); the environment provider maps them to `HTTP_PORT`, which is the name
/// every error message uses. Parsing is done here rather than by the reader so a bad value is reported, not
/// silently replaced by the default.
public struct Settings: Sendable {
    public let reader: ConfigReader
    /// When set, remembers every variable read (deployment tests compare it with docker-compose.yml).
    public let recorder: VariableRecorder?

    public init(reader: ConfigReader, recorder: VariableRecorder? = nil) {
        self.reader = reader
        self.recorder = recorder
    }

    /// Reads the process environment.
    public static func environment(recorder: VariableRecorder? = nil) -> Settings {
        Settings(reader: ConfigReader(provider: EnvironmentVariablesProvider()), recorder: recorder)
    }

    /// A fixed set of variables (tests, tools), written as environment variable names.
    public static func fixed(_ variables: [String: String], recorder: VariableRecorder? = nil) -> Settings {
        Settings(reader: ConfigReader(provider: EnvironmentVariablesProvider(environmentVariables: variables)), recorder: recorder)
    }

    public static func variableName(_ key: String) -> String {
        key.uppercased().replacingOccurrences(of: ".", with: "_").replacingOccurrences(of: "-", with: "_")
    }

    public func string(_ key: String) -> String? {
        recorder?.record(Self.variableName(key))
        guard let value = reader.string(forKey: ConfigKey(key)), !value.isEmpty else { return nil }
        return value
    }

    public func string(_ key: String, default value: String) -> String { string(key) ?? value }

    /// A secret: the variable itself, or the contents of the file named by `<VARIABLE>_FILE` (trailing line
    /// breaks dropped), so a deployment can mount secrets as files (Docker and Kubernetes secrets) instead of
    /// putting them in the process environment, which `docker inspect` and crash reports show. Setting both is
    /// an error: which one wins would be a guess.
    public func secret(_ key: String) throws -> String? {
        let variable = Self.variableName(key)
        let direct = string(key)
        guard let path = string(key + ".file") else { return direct }
        guard direct == nil else {
            throw ConfigurationError(variable: variable + "_FILE", message: "and \(variable) are both set: set one of them")
        }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError(variable: variable + "_FILE", message: "names '\(path)', which cannot be read as UTF-8 text")
        }
        var value = Substring(text)
        while let last = value.last, last == "\n" || last == "\r" { value = value.dropLast() }
        return value.isEmpty ? nil : String(value)
    }

    public func secret(_ key: String, default value: String) throws -> String { try secret(key) ?? value }

    public func requiredSecret(_ key: String) throws -> String {
        guard let value = try secret(key) else {
            let variable = Self.variableName(key)
            throw ConfigurationError(variable: variable, message: "is required but not set (nor \(variable)_FILE)")
        }
        return value
    }

    public func requiredString(_ key: String) throws -> String {
        guard let value = string(key) else {
            throw ConfigurationError(variable: Self.variableName(key), message: "is required but not set")
        }
        return value
    }

    public func int(_ key: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = string(key) else { return value }
        guard let parsed = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(parsed) else {
            throw ConfigurationError(variable: Self.variableName(key),
                                     message: "must be a whole number in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
        }
        return parsed
    }

    /// A duration in seconds (fractions allowed, e.g. `0.25`).
    public func seconds(_ key: String, default value: Double, range: ClosedRange<Double>) throws -> Double {
        guard let text = string(key) else { return value }
        guard let parsed = Double(text.trimmingCharacters(in: .whitespaces)), range.contains(parsed) else {
            throw ConfigurationError(variable: Self.variableName(key),
                                     message: "must be a number of seconds in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
        }
        return parsed
    }

    /// `seconds` as a `Duration` (to the millisecond).
    public func duration(_ key: String, default value: Double, range: ClosedRange<Double>) throws -> Duration {
        .milliseconds(Int64((try seconds(key, default: value, range: range) * 1000).rounded()))
    }

    public func bool(_ key: String, default value: Bool) throws -> Bool {
        guard let text = string(key)?.lowercased() else { return value }
        switch text {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw ConfigurationError(variable: Self.variableName(key), message: "must be true or false, got '\(text)'")
        }
    }

    public func url(_ key: String, default value: String? = nil, schemes: Set<String>) throws -> URL {
        guard let text = string(key) ?? value else {
            throw ConfigurationError(variable: Self.variableName(key), message: "is required but not set")
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), schemes.contains(scheme), url.host != nil else {
            throw ConfigurationError(variable: Self.variableName(key),
                                     message: "must be a URL with scheme \(schemes.sorted().joined(separator: " or ")), got '\(Self.redacted(text))'")
        }
        return url
    }

    /// A comma-separated list; empty items are dropped.
    public func list(_ key: String) -> [String] {
        Self.items(string(key))
    }

    /// A comma-separated list that is a secret (`secret(_:)`).
    public func secretList(_ key: String) throws -> [String] {
        Self.items(try secret(key))
    }

    static func items(_ text: String?) -> [String] {
        (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    public func logLevel() throws -> Logger.Level {
        guard let text = string("log.level") else { return .info }
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw ConfigurationError(variable: "LOG_LEVEL", message: "must be one of trace, debug, info, notice, warning, error, critical, got '\(text)'")
        }
        return level
    }

    /// Hides the password of a URL so configuration errors and logs never print secrets.
    public static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text) else { return text.contains("@") ? "<redacted>" : text }
        guard components.password != nil else { return text }
        components.password = "***"
        return components.string ?? "<redacted>"
    }
}

/// The environment variable names a configuration read.
public final class VariableRecorder: Sendable {
    private let names = Mutex<Set<String>>([])
    public init() {}
    func record(_ name: String) { names.withLock { _ = $0.insert(name) } }
    public var variables: Set<String> { names.withLock { $0 } }
}

/// A service's whole configuration, read and validated from `Settings` before anything starts.
public protocol ServiceConfiguration: Sendable {
    init(settings: Settings) throws
    var process: ProcessSettings { get }
}

/// Settings every Lantern process reads.
///
/// Each process listens on two ports: `HTTP_PORT` for its API (and a bare `/health/live`), and `OPS_PORT` for
/// what only the deployment should see — `/health/ready`, `/metrics` and, on the gateway, the upstream report.
/// Keeping them apart means a public listener never reveals topology or metrics, whatever sits in front of it.
public struct ProcessSettings: Sendable {
    /// `LANTERN_ENVIRONMENT`: what only development may do (a development identity provider, built-in keys) is
    /// refused unless it says `development`; unset means production, so a forgotten variable fails safe.
    public enum Environment: String, Sendable {
        case development, production

        /// `LANTERN_ENVIRONMENT` as `settings` say it (any case; unset: production), for configuration read apart
        /// from `ProcessSettings` that refuses development-only settings elsewhere (`AppStoreConfiguration`).
        public init(settings: Settings) throws {
            let text = settings.string("lantern.environment", default: "production")
            guard let known = Self(rawValue: text.lowercased()) else {
                throw ConfigurationError(variable: "LANTERN_ENVIRONMENT", message: "must be development or production, got '\(text)'")
            }
            self = known
        }
    }

    public var serviceName: String
    public var environment: Environment
    public var host: String
    public var port: Int
    public var logLevel: Logger.Level
    /// `LOG_FORMAT`: `json` (default) or `text`.
    public var logFormat: LogLine.Format
    /// The port when `HTTP_PORT` is not set (each service has its own; `Services/services.tsv` lists them).
    public var defaultPort: Int
    /// `OPS_HOST`: where the operations listener binds (default: `HTTP_HOST`).
    public var operationsHost: String
    /// `OPS_PORT`: the operations listener (default: `HTTP_PORT` + 1000; any free port when `HTTP_PORT` is 0).
    public var operationsPort: Int
    /// The names the API listener answers to, or nil when it takes any `Host` (`AllowedHosts`: checked in
    /// development and wherever `ALLOWED_HOSTS` is set).
    public var apiHosts: AllowedHosts?
    /// The names the operations listener answers to (its own address, `OPS_HOST`, beside the same list).
    public var operationsHosts: AllowedHosts?

    /// The operations port that goes with an API port when `OPS_PORT` is not set.
    public static func defaultOperationsPort(for port: Int) -> Int { port == 0 ? 0 : port + operationsPortOffset }
    public static let operationsPortOffset = 1000

    public init(serviceName: String, host: String, port: Int, logLevel: Logger.Level) {
        self.serviceName = serviceName
        self.host = host
        self.port = port
        self.logLevel = logLevel
        self.logFormat = .json
        self.defaultPort = port
        self.environment = .production
        self.operationsHost = host
        self.operationsPort = Self.defaultOperationsPort(for: port)
    }

    public init(serviceName: String, settings: Settings, defaultPort: Int) throws {
        self.serviceName = serviceName
        self.defaultPort = defaultPort
        self.host = settings.string("http.host", default: "127.0.0.1")
        self.port = try settings.int("http.port", default: defaultPort, range: 0...65535)
        self.logLevel = try settings.logLevel()
        let format = settings.string("log.format", default: "json")
        guard let logFormat = LogLine.Format(rawValue: format.lowercased()) else {
            throw ConfigurationError(variable: "LOG_FORMAT", message: "must be json or text, got '\(format)'")
        }
        self.logFormat = logFormat
        self.environment = try Environment(settings: settings)
        self.operationsHost = settings.string("ops.host", default: host)
        let derived = Self.defaultOperationsPort(for: port)
        guard settings.string("ops.port") != nil || derived <= 65535 else {
            throw ConfigurationError(variable: "OPS_PORT", message: "must be set when HTTP_PORT + \(Self.operationsPortOffset) is over 65535")
        }
        self.operationsPort = try settings.int("ops.port", default: derived, range: 0...65535)
        if operationsPort != 0 && operationsPort == port {
            throw ConfigurationError(variable: "OPS_PORT", message: "must differ from HTTP_PORT (\(port)): operations are never served on the API's port")
        }
        // A page that rebinds its name to this machine reaches every port of the stack, not only the gateway's.
        let listed = settings.list("allowed.hosts")
        if environment == .development || !listed.isEmpty {
            apiHosts = try AllowedHosts(host: host, extra: listed)
            operationsHosts = try AllowedHosts(host: operationsHost, extra: listed)
        }
    }
}
