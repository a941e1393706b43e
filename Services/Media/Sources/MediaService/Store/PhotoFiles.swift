import Foundation
import NIOPosix

/// Files under a directory, written atomically (temporary file + rename). File I/O runs on NIO's blocking pool,
/// never on an event loop.
public struct DirectoryPhotoFiles: PhotoFiles {
    public let directory: URL

    public init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func url(_ key: String) -> URL {
        // Keys are UUIDs made by the service; refuse anything else so a key can never walk out of the directory.
        precondition(UUID(uuidString: key) != nil, "storage keys are UUIDs")
        return directory.appendingPathComponent(key)
    }

    public func write(_ bytes: [UInt8], key: String) async throws {
        let url = url(key)
        try await NIOThreadPool.singleton.runIfActive { try Data(bytes).write(to: url, options: .atomic) }
    }

    public func read(key: String) async throws -> [UInt8]? {
        let url = url(key)
        return try await NIOThreadPool.singleton.runIfActive {
            guard FileManager.default.fileExists(atPath: url.path) else { return nil }
            return Array(try Data(contentsOf: url))
        }
    }

    public func delete(key: String) async throws {
        let url = url(key)
        try await NIOThreadPool.singleton.runIfActive {
            if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
        }
    }
}
