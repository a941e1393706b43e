import ServiceLifecycle
import Logging
/// Runs a consumer (or any service) in the background while `body` runs, then stops it.
public func withService<T: Sendable>(_ service: some Service, _ body: @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: Void.self) { group in
        let serviceGroup = ServiceGroup(configuration: .init(services: [service], logger: TestEnvironment.logger))
        group.addTask { try await serviceGroup.run() }
        do {
            let result = try await body()
            await serviceGroup.triggerGracefulShutdown()
            try await group.waitForAll()
            return result
        } catch {
            await serviceGroup.triggerGracefulShutdown()
            try? await group.waitForAll()
            throw error
        }
    }
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
