import Foundation
import NIOPosix

/// Runs a program to its end and collects what it printed. The waiting happens on NIO's blocking pool: tests run
/// in parallel on the few concurrency threads, and one blocked for seconds (`swift package dump-package`) would
/// stall every other test meanwhile.
public enum ChildProcess {
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: Data
        public var stderr: String
    }

    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                           currentDirectory: URL? = nil) async throws -> Output {
        try await NIOThreadPool.singleton.runIfActive {
            let process = Process()
            process.executableURL = executable
            process.arguments = arguments
            if let environment { process.environment = environment }
            if let currentDirectory { process.currentDirectoryURL = currentDirectory }
            let output = Pipe(), errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            // Read both pipes to the end before waiting, so a child that writes a lot never blocks on a full pipe.
            let errorData = Locked(Data())
            let reader = Thread { errorData.set(errors.fileHandleForReading.readDataToEndOfFile()) }
            reader.start()
            let stdout = output.fileHandleForReading.readDataToEndOfFile()
            // Polled rather than `waitUntilExit()`, which on Linux can wait on a run loop that never turns.
            while process.isRunning || !errorData.isSet { usleep(1000) }
            return Output(status: process.terminationStatus, stdout: stdout, stderr: String(decoding: errorData.value, as: UTF8.self))
        }
    }

    private final class Locked: @unchecked Sendable {
        private let lock = NSLock()
        private var data: Data
        private var done = false
        init(_ data: Data) { self.data = data }
        func set(_ value: Data) { lock.withLock { data = value; done = true } }
        var isSet: Bool { lock.withLock { done } }
        var value: Data { lock.withLock { data } }
    }
}
