import ServiceLifecycle
import Logging
/// Runs `service` (a consumer, a fake server, a whole process) while `body` runs, then stops it gracefully and
/// waits for it, rethrowing what its `run()` threw. A service that ends first (a port taken, a bad configuration)
/// cancels `body` and ends the call with its error, rather than leaving `body` waiting for something that will
/// never come (a listening port, a consumed message): a test then fails instead of hanging the run.
public func withService<T: Sendable>(_ service: some Service, logger: Logger = TestEnvironment.logger,
                                     _ body: @Sendable () async throws -> T) async throws -> T {
    let serviceGroup = ServiceGroup(configuration: .init(services: [service], logger: logger))
    return try await withoutActuallyEscaping(body) { body in
        try await withThrowingTaskGroup(of: ServiceRace<T>.self) { group in
            group.addTask {
                do { try await serviceGroup.run(); return .service(nil) } catch { return .service(error) }
            }
            group.addTask {
                do { return .body(.success(try await body())) } catch { return .body(.failure(error)) }
            }
            switch try await group.next() {
            case .body(let result):
                await serviceGroup.triggerGracefulShutdown()
                if case .service(let error?) = try await group.next(), case .success = result { throw error }
                return try result.get()
            case .service(let error):
                group.cancelAll()
                _ = try await group.next()
                throw error ?? ServiceEndedEarly(service: "\(type(of: service))")
            case nil:
                throw CancellationError()
            }
        }
    }
}

/// Which of `withService`'s two tasks ended, and how.
private enum ServiceRace<T: Sendable>: Sendable {
    case service((any Error)?)
    case body(Result<T, any Error>)
}

/// The service given to `withService` returned before the body was done.
public struct ServiceEndedEarly: Error, CustomStringConvertible {
    public let service: String
    public var description: String { "\(service) stopped before the test was done with it" }
}

/// Polls `condition` until it holds or `timeout` passes. The default is generous: it costs nothing when the
/// condition comes true, and a fresh CI machine running every suite at once can be slow to get there.
public func eventually(timeout: Duration = .seconds(30), _ condition: @Sendable () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}


/// Polls `value` until it is not nil or `timeout` passes; returns the last answer.
public func eventuallyValue<T: Sendable>(timeout: Duration = .seconds(30), _ value: @Sendable () async throws -> T?) async throws -> T? {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if let found = try await value() { return found }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await value()
}
