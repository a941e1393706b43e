import LanternObjectStorage

/// Symbi's pictures in the object storage `SYMBI_STORAGE` names (a folder or an S3-compatible bucket under
/// `SYMBI_S3_PREFIX`), the same that health-brain reads them from.
struct StoredImageFiles: EvolutionImageFiles {
    let objects: any ObjectFiles

    func write(_ bytes: [UInt8], key: String, contentType: String) async throws {
        try await objects.write(bytes, key: key, contentType: contentType)
    }

    func read(key: String) async throws -> [UInt8]? { try await objects.read(key: key) }

    func delete(key: String) async throws { try await objects.delete(key: key) }
}
