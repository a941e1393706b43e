import LanternObjectStorage

/// Symbi's evolution pictures in the object storage `SYMBI_STORAGE` names, as evolution-worker stored them (read
/// only here: the worker writes them and deletes them with the account).
struct StoredEvolutionPictures: EvolutionPictures {
    let objects: any ObjectFiles

    func read(key: String) async throws -> [UInt8]? { try await objects.read(key: key) }
}
