import Foundation
import ImageSanitizer

/// Saved inputs: the seed corpora and regressions under `Tests/Fuzz/`, or any file or folder.
public enum FuzzInputs {
    /// `Tests/Fuzz/` of this checkout.
    public static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    /// The checkout itself.
    public static let root = folder.deletingLastPathComponent().deletingLastPathComponent()

    /// The files at `path`: itself, or the files of the folder (sorted, hidden ones skipped).
    public static func files(at path: String) throws -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { return [] }
        guard isFolder.boolValue else { return [path] }
        return try FileManager.default.contentsOfDirectory(atPath: path).filter { !$0.hasPrefix(".") }.sorted()
            .map { (path as NSString).appendingPathComponent($0) }
    }

    public static func bytes(of file: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: file)))
    }

    /// The seeds (`Corpus/<target>`) and the findings kept as regressions (`Regressions/<target>`).
    public static func saved(for target: FuzzTarget) throws -> [String] {
        try ["Corpus", "Regressions"].flatMap { try files(at: folder.appendingPathComponent("\($0)/\(target.rawValue)").path) }
    }

    /// The sanitized bytes of an image target's input, when the sanitizer accepts it.
    public static func sanitized(_ bytes: [UInt8], for target: FuzzTarget) -> [UInt8]? {
        guard [.jpeg, .png, .webp, .heic].contains(target), let format = ImageFormat(rawValue: target.rawValue),
              ImageFormat.detect(bytes) == format else { return nil }
        return try? ImageChecks.sanitizer.sanitize(bytes).bytes
    }
}
