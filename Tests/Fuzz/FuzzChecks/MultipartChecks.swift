import LanternCore
import MediaUpload
import NIOCore

/// The multipart upload: the input's first line is the request's `Content-Type`, the rest its body (the
/// seeds are what curl, browsers and React Native's `FormData` send). Whatever the bytes: a 4xx problem or
/// photo bytes that stand in the body as they were sent (a part is never joined from pieces or altered).
enum MultipartChecks {
    static func check(_ bytes: [UInt8]) throws(FuzzFinding) -> String {
        let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
        let contentType = String(decoding: bytes[..<newline], as: UTF8.self)
        let body = Array(bytes[min(newline + 1, bytes.count)...])
        let photo: [UInt8]
        do {
            photo = try MultipartPhoto.extract(from: ByteBuffer(bytes: body), contentType: contentType)
        } catch {
            try expect((400..<500).contains(error.status), "multipart: a client's body answered \(error.status) \(error.code)")
            return "problem \(error.status) \(error.code)"
        }
        try expect(!photo.isEmpty, "multipart: an empty photo was returned")
        try expect(standsInBody(photo, body), "multipart: the photo's \(photo.count) bytes are not in the body as sent")
        return "photo of \(photo.count) bytes"
    }

    /// Whether `part` follows the end of some part's headers (a blank line) in `body`, byte for byte. Linear in the
    /// body (a general substring search is quadratic on crafted bytes, slower than what it checks).
    static func standsInBody(_ part: [UInt8], _ body: [UInt8]) -> Bool {
        let blankLine: [UInt8] = [13, 10, 13, 10]
        var i = 0
        while i + 4 <= body.count {
            if body[i] == 13, body[i..<(i + 4)].elementsEqual(blankLine) {
                let start = i + 4
                if start + part.count <= body.count, body[start..<(start + part.count)].elementsEqual(part) { return true }
            }
            i += 1
        }
        return false
    }
}
