import Foundation

/// WebP (RIFF): drops the EXIF and XMP chunks, clears their flags in VP8X, and rewrites the RIFF size.
enum WebPSanitizer {
    static func sanitize(_ data: [UInt8], budget: inout ParseBudget) throws(ImageRejection) -> SanitizedImage {
        let b = Bytes(data)
        let riffSize = try b.le32(4)
        guard riffSize + 8 <= data.count else { throw .truncated("RIFF says \(riffSize + 8) bytes, got \(data.count)") }
        var chunks: [[UInt8]] = []
        var removed: [String] = []
        var size: (Int, Int)?
        var i = 12
        while i < riffSize + 8 {
            try budget.step()
            let type = try b.fourCC(i)
            let length = try b.le32(i + 4)
            let padded = length + (length & 1)
            var chunk = Array(try b.slice(i..<min(i + 8 + padded, data.count)))
            guard chunk.count >= 8 + length else { throw .truncated("chunk \(type) runs past the end") }
            // Within the RIFF (a missing last pad byte is tolerated); bytes after it are not part of the image, and
            // a chunk read from them would be cut off by the rewritten RIFF (found by `make fuzz`).
            guard i + 8 + length <= riffSize + 8 else { throw .truncated("chunk \(type) runs past the RIFF size") }
            let body = i + 8
            switch type {
            case "VP8X":
                guard length >= 10 else { throw .malformed("short VP8X") }
                size = (try b.le24(body + 4) + 1, try b.le24(body + 7) + 1)
                chunk[8] &= ~UInt8(0x08 | 0x04)  // EXIF and XMP flags
            case "VP8 ":
                // The fields read below lie inside the chunk, not in whatever follows it.
                guard length >= 10 else { throw .malformed("short VP8") }
                guard try b.u8(body + 3) == 0x9D, try b.u8(body + 4) == 0x01, try b.u8(body + 5) == 0x2A else {
                    throw .malformed("bad VP8 start code")
                }
                if size == nil { size = (try b.le16(body + 6) & 0x3FFF, try b.le16(body + 8) & 0x3FFF) }
            case "VP8L":
                guard length >= 5 else { throw .malformed("short VP8L") }
                guard try b.u8(body) == 0x2F else { throw .malformed("bad VP8L signature") }
                let bits = try b.le32(body + 1)
                if size == nil { size = ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1) }
            default:
                break
            }
            if type == "EXIF" || type == "XMP " {
                removed.append(type.trimmingCharacters(in: .whitespaces))
            } else {
                chunks.append(chunk)
            }
            i += 8 + padded
        }
        guard let (width, height) = size else { throw .malformed("no VP8, VP8L or VP8X chunk") }
        let payload = chunks.flatMap { $0 }
        let total = UInt32(4 + payload.count)
        var out = Array("RIFF".utf8)
        out += [UInt8(total & 0xFF), UInt8(total >> 8 & 0xFF), UInt8(total >> 16 & 0xFF), UInt8(total >> 24)]
        out += Array("WEBP".utf8) + payload
        return SanitizedImage(format: .webp, width: width, height: height, decodedPixels: width * height, bytes: out, removed: removed)
    }
}
