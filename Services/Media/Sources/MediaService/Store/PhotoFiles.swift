import LanternObjectStorage

/// Photo bytes in the object storage `MEDIA_STORAGE` names: a folder (`DirectoryObjectFiles`, written atomically)
/// or an S3-compatible bucket (`S3ObjectFiles` under `MEDIA_S3_PREFIX`). Keys are the moments' UUIDs.
struct StoredPhotoFiles: PhotoFiles {
    let objects: any ObjectFiles

    func write(_ bytes: [UInt8], key: String, contentType: String) async throws {
        try await objects.write(bytes, key: key, contentType: contentType)
    }

    func read(key: String) async throws -> [UInt8]? { try await objects.read(key: key) }

    func delete(key: String) async throws { try await objects.delete(key: key) }
}
