import Foundation

/// A `multipart/form-data` body (RFC 7578 over RFC 2046) split into its parts, in one pass over the bytes.
///
/// Written here rather than taken from MultipartKit: its 4.7.1 parser indexes a 128-entry table with any byte of
/// a part's header name, so one byte ≥ 0x80 there trapped and took the media process down (found by
/// `make fuzz`, kept in `Tests/Fuzz/Regressions/multipart/`). This parser reads only what an upload needs — each
/// part's `Content-Disposition` name and filename, and its bytes — and refuses anything else with `FormError`.
public struct MultipartForm: Sendable {
    public struct Part: Sendable, Equatable {
        /// The `name` parameter of `Content-Disposition`.
        public var name: String?
        /// The `filename` parameter, when the part is a file.
        public var filename: String?
        /// The part's bytes as sent (they lie in the body unchanged).
        public var body: ArraySlice<UInt8>
    }

    public enum FormError: Error, Equatable, Sendable {
        case noBoundary
        case noClosingBoundary
        case malformedHeader
        case tooManyParts
        case headersTooLarge
    }

    /// A web form with a photo has a handful of parts; more is not an upload.
    public static let maxParts = 32
    /// Header bytes of one part (a Content-Disposition with a long file name fits many times over).
    public static let maxHeaderBytes = 8 * 1024

    public var parts: [Part]

    /// Splits `body` at `boundary` (RFC 2046: 1–70 characters). Parts are what stands between
    /// `--boundary` lines up to `--boundary--`; the preamble before the first and the epilogue after the last
    /// are ignored, as the RFC asks.
    public init(body: [UInt8], boundary: String) throws(FormError) {
        let dash = Array("--".utf8) + Array(boundary.utf8)
        let delimiter = [13, 10] + dash
        // The first boundary may open the body, or follow a preamble after a line break.
        var position: Int
        if body.starts(with: dash) {
            position = dash.count
        } else if let found = Self.find(delimiter, in: body, from: 0) {
            position = found + delimiter.count
        } else {
            throw .noBoundary
        }
        var parts: [Part] = []
        while true {
            // After a boundary: `--` closes the form; otherwise optional padding, then CRLF.
            if body[position...].starts(with: [45, 45]) {
                self.parts = parts
                return
            }
            while position < body.count, body[position] == 32 || body[position] == 9 { position += 1 }
            guard body[position...].starts(with: [13, 10]) else { throw .malformedHeader }
            position += 2
            guard parts.count < Self.maxParts else { throw .tooManyParts }
            var part = Part(name: nil, filename: nil, body: [])
            // Header lines up to an empty line.
            let headerStart = position
            while true {
                guard let end = Self.find([13, 10], in: body, from: position) else { throw .malformedHeader }
                guard end - headerStart <= Self.maxHeaderBytes else { throw .headersTooLarge }
                let line = body[position..<end]
                position = end + 2
                if line.isEmpty { break }
                try Self.readHeader(line, into: &part)
            }
            guard let end = Self.find(delimiter, in: body, from: position) else { throw .noClosingBoundary }
            part.body = body[position..<end]
            parts.append(part)
            position = end + delimiter.count
        }
    }

    /// `name: value`; only `Content-Disposition` is read (a part's own type is as untrusted as the request's).
    static func readHeader(_ line: ArraySlice<UInt8>, into part: inout Part) throws(FormError) {
        guard let colon = line.firstIndex(of: 58), colon > line.startIndex,
              line[..<colon].allSatisfy(isTokenByte) else { throw .malformedHeader }
        let name = String(decoding: line[..<colon], as: UTF8.self)
        guard name.lowercased() == "content-disposition" else { return }
        let value = String(decoding: line[(colon + 1)...], as: UTF8.self)
        for item in value.split(separator: ";").dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            var text = pair[1]
            if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = String(text.dropFirst().dropLast()) }
            switch pair[0].lowercased() {
            case "name": part.name = text
            case "filename": part.filename = text
            default: break
            }
        }
    }

    /// RFC 9110 `token` characters: what a header name is made of.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
        default: return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// The first index of `needle` in `haystack` at or after `start`. The needle is short (a boundary is at most
    /// 74 bytes with its prefix), so comparing at each candidate byte is linear in the body for practical purposes
    /// and bounded by 74 × its length at worst.
    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, haystack.count >= needle.count else { return nil }
        var i = start
        let last = haystack.count - needle.count
        while i <= last {
            if haystack[i] == first, haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}
