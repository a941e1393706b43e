import Foundation
import Hummingbird
import LanternCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// What every executable's `main.swift` does: read the environment, build the application, run it until SIGTERM.
///
/// Swift concurrency is moved onto NIO's event loops first, so handlers, postgres-nio and the HTTP server share
/// threads instead of hopping between two pools on every request (nothing in Lantern blocks those threads:
/// hiredis calls run on their own pools). A configuration mistake exits with 78 (EX_CONFIG) naming the variable;
/// any other start-up failure exits with 1. Messages go to stderr.
public enum ServiceMain {
    public static func run<Configuration: ServiceConfiguration, App: ApplicationProtocol>(
        _ name: String, _ configuration: Configuration.Type, build: (Configuration) async throws -> App
    ) async {
        if CommandLine.arguments.dropFirst().first == "--print-variables" { printVariables(name, configuration) }
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        do {
            let configuration = try Configuration(settings: .environment())
            LoggingSystem.bootstrap({ label, provider in
                var handler = LogLine(label: label, format: configuration.process.logFormat, metadataProvider: provider)
                handler.logLevel = configuration.process.logLevel
                return handler
            }, metadataProvider: LanternTracing.loggingMetadata)
            let tracing = try LanternTracing.bootstrap(serviceName: name)
            let app = try await build(configuration)
            // The tracer's exporter starts first and stops last, so the last spans of a shutdown still leave.
            let group = ServiceGroup(configuration: .init(
                services: [.init(service: tracing), .init(service: app, successTerminationBehavior: .gracefullyShutdownGroup,
                                                           failureTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: Logger(label: name)))
            try await group.run()
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("\(name): \(error)\n".utf8))
            exit(78)
        } catch {
            FileHandle.standardError.write(Data("\(name): stopped: \(error)\n".utf8))
            exit(1)
        }
    }

    /// `<executable> --print-variables`: reads the configuration from the environment as a start would, then prints
    /// the variables it read and its default port as JSON and exits, starting nothing. The deployment tests run
    /// it with each deployment file's environment, so compose, Kubernetes and the docs are checked against what
    /// the executable really reads, with no list of services in the tests.
    static func printVariables<Configuration: ServiceConfiguration>(_ name: String, _ configuration: Configuration.Type) -> Never {
        let recorder = VariableRecorder()
        do {
            let settings = Settings.environment(recorder: recorder)
            let process = try Configuration(settings: settings).process
            let report = VariableReport(service: name, defaultPort: process.defaultPort, variables: recorder.variables.sorted())
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            FileHandle.standardOutput.write((try? encoder.encode(report)) ?? Data())
            FileHandle.standardOutput.write(Data("\n".utf8))
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("\(name): \(error)\n".utf8))
            exit(78)
        }
    }
}

/// What `--print-variables` prints.
public struct VariableReport: Codable, Sendable {
    public var service: String
    public var defaultPort: Int
    public var variables: [String]
}

extension ProcessSettings {
    /// The process logger at the configured level (`LOG_LEVEL`), or `logger` (tests) with that level applied.
    public func logger(_ logger: Logger?) -> Logger {
        var logger = logger ?? Logger(label: serviceName)
        logger.logLevel = logLevel
        return logger
    }
}

extension Request {
    /// Collects the body up to `limit` bytes; more is a 413 problem.
    public mutating func collectBody(limit: Int) async throws -> ByteBuffer {
        do {
            return try await collectBody(upTo: limit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw Problem.tooLarge("The body must be at most \(limit) bytes.")
        } catch is NIOTooManyBytesError {
            throw Problem.tooLarge("The body must be at most \(limit) bytes.")
        }
    }
}
