import Foundation
import LanternCore
import NIOCore

/// The photo inside a `multipart/form-data` upload (what `FormData` in React Native sends).
///
/// The part named `photo` (or `file`, `image`) wins; otherwise the first part with a file name. Only the bytes are
/// used: the part's own content type is as untrusted as the request's. A module of its own (`MultipartForm`
/// splits the body) so that the parse of these attacker bytes can be fuzzed alone (`make fuzz`).
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

    public static func extract(from body: ByteBuffer, contentType: String) throws(Problem) -> [UInt8] {
        guard let boundary = boundary(of: contentType), boundary.utf8.count <= 70 else {
            throw Problem.badRequest("multipart/form-data needs a boundary parameter of 1 to 70 characters.", code: "malformed_multipart")
        }
        let form: MultipartForm
        do {
            form = try MultipartForm(body: Array(buffer: body), boundary: boundary)
        } catch {
            throw Problem.badRequest("The multipart body could not be read (\(error)).", code: "malformed_multipart")
        }
        let parts = form.parts
        let preferred = parts.first { ["photo", "file", "image"].contains($0.name ?? "") } ?? parts.first { $0.filename != nil }
        guard let photo = preferred, !photo.body.isEmpty else {
            throw Problem.invalid(field: "photo", "the form has no photo part (name it \"photo\")", code: "image_missing")
        }
        return Array(photo.body)
    }
}
