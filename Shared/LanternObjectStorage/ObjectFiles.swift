import AsyncHTTPClient
import Foundation
import LanternCore
import NIOPosix

/// Whole objects by key: Pairly's photos, Symbi's evolution images. A folder (`DirectoryObjectFiles`, one replica or
/// a shared volume) or an S3-compatible bucket (`S3ObjectFiles`, any number of replicas), chosen by
/// `ObjectStorageSettings`. Services declare their own protocol with these three methods in their domain and
/// conform these types to it, so no domain imports storage.
public protocol ObjectFiles: Sendable {
    func write(_ bytes: [UInt8], key: String, contentType: String) async throws
    /// The object's bytes, nil when there is none.
    func read(key: String) async throws -> [UInt8]?
    /// Deleting an object that is not there succeeds.
    func delete(key: String) async throws
}

/// A key no service made: storage refuses it instead of touching a path or object outside its own.
public struct InvalidObjectKey: Error, CustomStringConvertible {
    public let key: String
    public var description: String { "not an object key: '\(key.prefix(80))'" }
}

public enum ObjectKey {
    /// Keys are names services make (a UUID, `<uuid>.png`): 1–128 of `A–Z a–z 0–9 . _ -`, not starting with a
    /// dot, so no key can name a parent folder or a hidden file, nor walk out of a bucket's prefix.
    public static func isValid(_ key: String) -> Bool {
        guard (1...128).contains(key.utf8.count), key.first != "." else { return false }
        return key.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }

    static func checked(_ key: String) throws -> String {
        guard isValid(key) else { throw InvalidObjectKey(key: key) }
        return key
    }
}

/// Files under a directory, written atomically (temporary file + rename). File I/O runs on NIO's blocking pool,
/// never on an event loop.
public struct DirectoryObjectFiles: ObjectFiles {
    public let directory: URL

    public init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func url(_ key: String) throws -> URL { directory.appendingPathComponent(try ObjectKey.checked(key)) }

    public func write(_ bytes: [UInt8], key: String, contentType: String) async throws {
        let url = try url(key)
        try await NIOThreadPool.singleton.runIfActive { try Data(bytes).write(to: url, options: .atomic) }
    }

    public func read(key: String) async throws -> [UInt8]? {
        let url = try url(key)
        return try await NIOThreadPool.singleton.runIfActive {
            guard FileManager.default.fileExists(atPath: url.path) else { return nil }
            return Array(try Data(contentsOf: url))
        }
    }

    public func delete(key: String) async throws {
        let url = try url(key)
        try await NIOThreadPool.singleton.runIfActive {
            if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
        }
    }
}

/// Objects of an S3-compatible bucket under a prefix (`moments/`, `evolutions/`), so one bucket can hold several
/// services' objects.
public struct S3ObjectFiles: ObjectFiles {
    /// A key no service makes: readiness reads it and expects "no such object".
    public static let probeKey = "readiness-probe"

    public let bucket: S3Bucket
    public let prefix: String

    public init(bucket: S3Bucket, prefix: String) {
        self.bucket = bucket
        self.prefix = prefix
    }

    func objectKey(_ key: String) throws -> String { prefix + (try ObjectKey.checked(key)) }

    public func write(_ bytes: [UInt8], key: String, contentType: String) async throws {
        try await bucket.put(bytes, key: try objectKey(key), contentType: contentType)
    }

    public func read(key: String) async throws -> [UInt8]? {
        try await bucket.get(key: try objectKey(key))
    }

    public func delete(key: String) async throws {
        try await bucket.delete(key: try objectKey(key))
    }
}

/// Where a service keeps its objects, read from `<SCOPE>_STORAGE` (`directory`, the default, or `s3`),
/// `<SCOPE>_STORAGE_DIR`, and `<SCOPE>_S3_ENDPOINT`, `_BUCKET`, `_REGION`, `_ACCESS_KEY_ID`,
/// `_SECRET_ACCESS_KEY` (or `_FILE`), `_PREFIX`, `_ADDRESSING` (docs/configuration.md). Services that share
/// objects (health-brain and evolution-worker share Symbi's images) read the same scope.
public enum ObjectStorageSettings: Sendable {
    case directory(URL)
    case s3(S3Settings)

    public struct S3Settings: Sendable {
        public var endpoint: URL
        public var bucket: String
        public var region: String
        public var accessKeyID: String
        public var secretAccessKey: String
        /// Prepended to every object key, so the bucket can hold other things.
        public var prefix: String
        public var addressing: S3Bucket.Addressing
    }

    /// - Parameters:
    ///   - scope: the variables' first word, lower case (`media` → `MEDIA_STORAGE`).
    ///   - defaultDirectory: the folder when `<SCOPE>_STORAGE_DIR` is not set.
    ///   - defaultPrefix: the key prefix in a bucket when `<SCOPE>_S3_PREFIX` is not set.
    public init(settings: Settings, scope: String, defaultDirectory: String, defaultPrefix: String) throws {
        let variable = { (key: String) in Settings.variableName("\(scope).\(key)") }
        switch settings.string("\(scope).storage", default: "directory").lowercased() {
        case "directory":
            self = .directory(URL(fileURLWithPath: settings.string("\(scope).storage.dir", default: defaultDirectory)))
        case "s3":
            let addressing = settings.string("\(scope).s3.addressing", default: "path")
            guard let style = S3Bucket.Addressing(rawValue: addressing.lowercased()) else {
                throw ConfigurationError(variable: variable("s3.addressing"), message: "must be path or virtual, got '\(addressing)'")
            }
            let bucket = try settings.requiredString("\(scope).s3.bucket")
            guard (3...63).contains(bucket.count), bucket.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "-" || $0 == "." }) else {
                throw ConfigurationError(variable: variable("s3.bucket"),
                                         message: "must be an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens), got '\(bucket)'")
            }
            self = .s3(S3Settings(
                endpoint: try settings.url("\(scope).s3.endpoint", schemes: ["https", "http"]), bucket: bucket,
                region: settings.string("\(scope).s3.region", default: "us-east-1"),
                accessKeyID: try settings.requiredString("\(scope).s3.access.key.id"),
                secretAccessKey: try settings.requiredSecret("\(scope).s3.secret.access.key"),
                prefix: settings.string("\(scope).s3.prefix", default: defaultPrefix), addressing: style))
        case let other:
            throw ConfigurationError(variable: variable("storage"), message: "must be directory or s3, got '\(other)'")
        }
    }

    /// The store these settings name. A bucket comes with a readiness check (a read of `S3ObjectFiles.probeKey`:
    /// "no such object" is an answer, a wrong key or bucket is not); `makeClient` is called for a bucket only, and
    /// the caller owns and shuts down the client it makes.
    public func files(makeClient: () -> HTTPClient) throws -> (files: any ObjectFiles, readiness: (@Sendable () async throws -> Void)?) {
        switch self {
        case .directory(let directory):
            return (try DirectoryObjectFiles(directory: directory), nil)
        case .s3(let s3):
            let bucket = S3Bucket(endpoint: s3.endpoint, bucket: s3.bucket, region: s3.region,
                                  credentials: .init(accessKeyID: s3.accessKeyID, secretAccessKey: s3.secretAccessKey),
                                  addressing: s3.addressing, client: makeClient())
            let objects = S3ObjectFiles(bucket: bucket, prefix: s3.prefix)
            return (objects, { _ = try await objects.read(key: S3ObjectFiles.probeKey) })
        }
    }
}
