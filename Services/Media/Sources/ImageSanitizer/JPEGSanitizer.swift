import Foundation

/// JPEG: walks every marker segment to the end-of-image marker; keeps what decoding needs (JFIF APP0, ICC
/// profile APP2, Adobe APP14, tables, frames, scans) and drops APP1 (EXIF, XMP), APP13 (IPTC), other APPn and COM.
enum JPEGSanitizer {
    static func sanitize(_ data: [UInt8]) throws(ImageRejection) -> SanitizedImage {
        let b = Bytes(data)
        var out: [UInt8] = [0xFF, 0xD8]
        out.reserveCapacity(data.count)
        var removed: [String] = []
        var size: (Int, Int)?
        var i = 2
        while true {
            guard i < data.count else { throw .truncated("no end-of-image marker") }
            guard data[i] == 0xFF else { throw .malformed("expected a marker at byte \(i)") }
            while i < data.count, data[i] == 0xFF { i += 1 }  // fill bytes
            let marker = try b.u8(i)
            i += 1
            switch marker {
            case 0xD9:  // EOI
                out += [0xFF, 0xD9]
                guard let (width, height) = size else { throw .malformed("no frame header") }
                return SanitizedImage(format: .jpeg, width: width, height: height, decodedPixels: width * height, bytes: out, removed: removed)
            case 0xD0...0xD7, 0x01:  // standalone markers
                out += [0xFF, UInt8(marker)]
                continue
            default:
                break
            }
            let length = try b.be16(i)
            guard length >= 2 else { throw .malformed("segment length \(length)") }
            let segment = try b.slice(i - 2..<i + length)  // marker + length + payload
            let payload = try b.slice(i + 2..<i + length)
            switch marker {
            case 0xC0...0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF:  // SOFn
                guard payload.count >= 5 else { throw .malformed("short frame header") }
                size = (try b.be16(i + 5), try b.be16(i + 3))
                out += [0xFF] + segment.dropFirst()
            case 0xE0, 0xEE:  // JFIF, Adobe
                out += [0xFF] + segment.dropFirst()
            case 0xE2 where payload.starts(with: Array("ICC_PROFILE\0".utf8)):
                out += [0xFF] + segment.dropFirst()
            case 0xE1:
                removed.append(payload.starts(with: Array("Exif\0".utf8)) ? "EXIF" : "XMP")
            case 0xE2...0xEF:
                removed.append(String(format: "APP%d", marker - 0xE0))
            case 0xFE:
                removed.append("COM")
            case 0xDA:  // SOS: header, then entropy-coded data up to the next real marker
                out += [0xFF] + segment.dropFirst()
                var j = i + length
                while true {
                    guard j + 1 < data.count else { throw .truncated("scan data runs past the end") }
                    if data[j] == 0xFF, data[j + 1] != 0x00, !(0xD0...0xD7).contains(data[j + 1]), data[j + 1] != 0xFF { break }
                    j += 1
                }
                out += data[(i + length)..<j]
                i = j
                continue
            default:  // tables and everything else decoding may need
                out += [0xFF] + segment.dropFirst()
            }
            i += length
        }
    }
}
