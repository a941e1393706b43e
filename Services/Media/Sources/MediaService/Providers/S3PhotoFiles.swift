import Foundation
import LanternObjectStorage

/// Photos as objects of an S3-compatible bucket (`MEDIA_STORAGE=s3`), so any number of media replicas share them
/// and a rollout never waits on a volume. Keys are the service's UUIDs under a prefix; a deleted photo or account
/// deletes its objects (the same `delete` the folder store does).
public struct S3PhotoFiles: PhotoFiles {
    /// A key no photo has (not a UUID): readiness reads it and expects "no such object".
    static let probeKey = "readiness-probe"

    let bucket: S3Bucket
    let prefix: String

    public init(bucket: S3Bucket, prefix: String) {
        self.bucket = bucket
        self.prefix = prefix
    }

    func objectKey(_ key: String) -> String {
        // Keys are UUIDs made by the service (or the probe's); nothing else becomes an object name.
        precondition(UUID(uuidString: key) != nil || key == Self.probeKey, "storage keys are UUIDs")
        return prefix + key
    }

    public func write(_ bytes: [UInt8], key: String) async throws {
        try await bucket.put(bytes, key: objectKey(key), contentType: "application/octet-stream")
    }

    public func read(key: String) async throws -> [UInt8]? {
        try await bucket.get(key: objectKey(key))
    }

    public func delete(key: String) async throws {
        try await bucket.delete(key: objectKey(key))
    }
}
