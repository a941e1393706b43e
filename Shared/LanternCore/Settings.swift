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
        (string(key) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
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
public struct ProcessSettings: Sendable {
    public var serviceName: String
    public var host: String
    public var port: Int
    public var logLevel: Logger.Level
    /// The port when `HTTP_PORT` is not set (each service has its own; `Services/services.tsv` lists them).
    public var defaultPort: Int

    public init(serviceName: String, host: String, port: Int, logLevel: Logger.Level) {
        self.serviceName = serviceName
        self.host = host
        self.port = port
        self.logLevel = logLevel
        self.defaultPort = port
    }

    public init(serviceName: String, settings: Settings, defaultPort: Int) throws {
        self.serviceName = serviceName
        self.defaultPort = defaultPort
        self.host = settings.string("http.host", default: "127.0.0.1")
        self.port = try settings.int("http.port", default: defaultPort, range: 0...65535)
        self.logLevel = try settings.logLevel()
    }
}
