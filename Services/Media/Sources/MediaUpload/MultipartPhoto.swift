import Foundation
import LanternCore
import MultipartKit
import NIOCore

/// The photo inside a `multipart/form-data` upload (what `FormData` in React Native sends).
///
/// The part named `photo` (or `file`, `image`) wins; otherwise the first part with a file name. Only the bytes are
/// used: the part's own content type is as untrusted as the request's. A module of its own (with MultipartKit)
/// so that the parse of these attacker bytes can be fuzzed alone (`make fuzz`).
public enum MultipartPhoto {
    /// Room for the multipart envelope on top of the photo limit.
    public static let overhead = 16 * 1024

    public static func boundary(of contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == "boundary" {
                let value = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                return value.isEmpty ? nil : value
            }
        }
        return nil
    }

    public static func extract(from body: ByteBuffer, contentType: String) throws -> [UInt8] {
        guard let boundary = boundary(of: contentType) else {
            throw Problem.badRequest("multipart/form-data needs a boundary parameter.", code: "malformed_multipart")
        }
        struct Part { var name: String?; var filename: String?; var bytes: [UInt8] = [] }
        var parts: [Part] = []
        var current = Part()
        let parser = MultipartParser(boundary: boundary)
        parser.onHeader = { name, value in
            guard name.lowercased() == "content-disposition" else { return }
            for item in value.split(separator: ";").dropFirst() {
                let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2 else { continue }
                let text = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                if pair[0] == "name" { current.name = text }
                if pair[0] == "filename" { current.filename = text }
            }
        }
        parser.onBody = { chunk in current.bytes += chunk.readBytes(length: chunk.readableBytes) ?? [] }
        parser.onPartComplete = {
            parts.append(current)
            current = Part()
        }
        do {
            try parser.execute(body)
        } catch {
            throw Problem.badRequest("The multipart body could not be read.", code: "malformed_multipart")
        }
        let preferred = parts.first { ["photo", "file", "image"].contains($0.name ?? "") } ?? parts.first { $0.filename != nil }
        guard let photo = preferred, !photo.bytes.isEmpty else {
            throw Problem.invalid(field: "photo", "the form has no photo part (name it \"photo\")", code: "image_missing")
        }
        return photo.bytes
    }
}
