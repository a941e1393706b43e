import Foundation
import Hummingbird
import LanternCore
import Logging
import NIOCore
import NIOPosix

/// What every executable's `main.swift` does: read the environment, build the application, run it until SIGTERM.
///
/// Swift concurrency is moved onto NIO's event loops first, so handlers, postgres-nio and the HTTP server share
/// threads instead of hopping between two pools on every request (nothing in Lantern blocks those threads:
/// hiredis calls run on their own pools). A configuration mistake exits with 78 (EX_CONFIG) naming the variable;
/// any other start-up failure exits with 1. Messages go to stderr.
public enum ServiceMain {
    public static func run<App: ApplicationProtocol>(_ name: String, _ build: (Settings) async throws -> App) async {
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        do {
            let app = try await build(.environment())
            try await app.runService()
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("\(name): \(error)\n".utf8))
            exit(78)
        } catch {
            FileHandle.standardError.write(Data("\(name): stopped: \(error)\n".utf8))
            exit(1)
        }
    }
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
