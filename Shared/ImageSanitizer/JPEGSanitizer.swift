import Foundation

/// JPEG: walks every marker segment to the end-of-image marker and keeps only what decoding needs — an allow-list:
/// the tables (DQT, DHT, DAC, DRI, DNL), the one frame header, the scans, a JFIF APP0 and an Adobe APP14 rebuilt
/// from their fields (so no thumbnail or trailing bytes ride along), and an ICC profile (APP2) that parses as one.
/// Everything else — EXIF and XMP (APP1), IPTC (APP13), other APPn, JPGn, COM, reserved markers — is dropped, and
/// so is anything after the end-of-image marker. Hierarchical JPEG (DHP, EXP, several frames) is refused: a second
/// frame header could declare other dimensions than the one checked.
enum JPEGSanitizer {
    static func sanitize(_ data: [UInt8], budget: inout ParseBudget) throws(ImageRejection) -> SanitizedImage {
        let b = Bytes(data)
        var out: [UInt8] = [0xFF, 0xD8]
        out.reserveCapacity(data.count)
        var removed: [String] = []
        var size: (Int, Int)?
        var icc = ICCChunks()
        var i = 2
        while true {
            try budget.step()
            guard i < data.count else { throw .truncated("no end-of-image marker") }
            guard data[i] == 0xFF else { throw .malformed("expected a marker at byte \(i)") }
            while i < data.count, data[i] == 0xFF { i += 1 }  // fill bytes
            let marker = try b.u8(i)
            // 0xFF00 is a stuffed zero of scan data, not a marker: read as a segment, its "length" would swallow the
            // tables and the frame header that follow (libjpeg skips it as garbage; refusing is the safe answer).
            guard marker != 0x00 else { throw .malformed("0xFF00 where a marker should be, at byte \(i - 1)") }
            i += 1
            switch marker {
            case 0xD9:  // EOI
                guard let (width, height) = size else { throw .malformed("no frame header") }
                // The ICC profile goes right after SOI's first segment (JFIF, if any): decoders read it before the frame.
                if let profile = icc.segments() { out.insert(contentsOf: profile, at: iccPosition(in: out)) } else if icc.seen { removed.append("ICC") }
                out += [0xFF, 0xD9]
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
                guard size == nil else { throw .malformed("more than one frame header") }
                guard payload.count >= 6 else { throw .malformed("short frame header") }
                size = (try Bytes.dimension(try b.be16(i + 5)), try Bytes.dimension(try b.be16(i + 3)))
                out += [0xFF] + segment.dropFirst()
            case 0xDE, 0xDF:  // DHP, EXP: hierarchical
                throw .malformed("hierarchical JPEG is not supported")
            case 0xC4, 0xCC, 0xDB, 0xDC, 0xDD:  // DHT, DAC, DQT, DNL, DRI
                out += [0xFF] + segment.dropFirst()
            case 0xE0:
                if let jfif = jfifSegment(payload) { out += jfif } else { removed.append("APP0") }
            case 0xEE:
                if let adobe = adobeSegment(payload) { out += adobe } else { removed.append("APP14") }
            case 0xE2 where payload.starts(with: Array("ICC_PROFILE\0".utf8)):
                icc.add(payload.dropFirst(12))
            case 0xE1:
                removed.append(payload.starts(with: Array("Exif\0".utf8)) ? "EXIF" : "XMP")
            case 0xE2...0xEF:
                removed.append(String(format: "APP%d", marker - 0xE0))
            case 0xFE:
                removed.append("COM")
            case 0xDA:  // SOS: header, then entropy-coded data up to the next real marker
                // A decoder needs the frame before its scans; one placed after them would leave the output undecodable.
                guard size != nil else { throw .malformed("a scan before the frame header") }
                out += [0xFF] + segment.dropFirst()
                var j = i + length
                while true {
                    try budget.step()
                    guard j + 1 < data.count else { throw .truncated("scan data runs past the end") }
                    if data[j] == 0xFF, data[j + 1] != 0x00, !(0xD0...0xD7).contains(data[j + 1]), data[j + 1] != 0xFF { break }
                    j += 1
                }
                out += data[(i + length)..<j]
                i = j
                continue
            default:  // JPGn, reserved markers: nothing a decoder needs
                removed.append(String(format: "0xFF%02X", marker))
            }
            i += length
        }
    }

    /// APP0 "JFIF": version, units and density kept, thumbnail dropped (16 bytes).
    static func jfifSegment(_ payload: ArraySlice<UInt8>) -> [UInt8]? {
        guard payload.count >= 14, payload.starts(with: Array("JFIF\0".utf8)) else { return nil }
        let fields = Array(payload.dropFirst(5).prefix(7))  // version (2), units (1), x and y density (2 + 2)
        return [0xFF, 0xE0, 0x00, 0x10] + Array("JFIF\0".utf8) + fields + [0x00, 0x00]
    }

    /// APP14 "Adobe": version, flags and colour transform (the decoder's RGB/YCC/YCCK choice), 14 bytes.
    static func adobeSegment(_ payload: ArraySlice<UInt8>) -> [UInt8]? {
        guard payload.count >= 12, payload.starts(with: Array("Adobe".utf8)) else { return nil }
        return [0xFF, 0xEE, 0x00, 0x0E] + Array(payload.prefix(12))
    }

    /// After SOI and a JFIF APP0 if there is one.
    static func iccPosition(in out: [UInt8]) -> Int {
        out.count >= 6 && out[2] == 0xFF && out[3] == 0xE0 ? 2 + 2 + (Int(out[4]) << 8 | Int(out[5])) : 2
    }
}

/// An ICC profile split over APP2 segments (`ICC_PROFILE\0`, sequence number, count, data): kept only when the
/// chunks number 1…n without gaps and join into a profile whose header and tag table are sound — its declared
/// size, the `acsp` signature, every tag inside the profile. Then it is written again from the joined bytes.
struct ICCChunks {
    private var chunks: [Int: ArraySlice<UInt8>] = [:]
    private var count = 0
    private var broken = false
    private(set) var seen = false

    mutating func add(_ chunk: ArraySlice<UInt8>) {
        seen = true
        guard chunk.count >= 2 else { broken = true; return }
        let sequence = Int(chunk[chunk.startIndex]), total = Int(chunk[chunk.startIndex + 1])
        if count == 0 { count = total }
        // A count of 0 is no count (a range 1...0 would trap: found by `make fuzz`, Tests/Fuzz/Regressions/jpeg).
        guard total >= 1, total == count, (1...total).contains(sequence), chunks[sequence] == nil else { broken = true; return }
        chunks[sequence] = chunk.dropFirst(2)
    }

    /// The APP2 segments of a sound profile, or nil.
    func segments() -> [UInt8]? {
        guard seen, !broken, count > 0, chunks.count == count else { return nil }
        let profile = (1...count).flatMap { Array(chunks[$0] ?? []) }
        guard Self.isSound(profile) else { return nil }
        var out: [UInt8] = []
        let pieces = stride(from: 0, to: profile.count, by: 65_519).map { Array(profile[$0..<min($0 + 65_519, profile.count)]) }
        for (index, piece) in pieces.enumerated() {
            let length = 2 + 12 + 2 + piece.count
            out += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + Array("ICC_PROFILE\0".utf8)
                + [UInt8(index + 1), UInt8(pieces.count)] + piece
        }
        return out
    }

    static func isSound(_ profile: [UInt8]) -> Bool {
        func be32(_ at: Int) -> Int? {
            guard at >= 0, at + 4 <= profile.count else { return nil }
            return Int(profile[at]) << 24 | Int(profile[at + 1]) << 16 | Int(profile[at + 2]) << 8 | Int(profile[at + 3])
        }
        guard profile.count >= 132, profile.count <= 1 << 20, be32(0) == profile.count,
              profile[36..<40].elementsEqual("acsp".utf8), let tags = be32(128), tags <= 100 else { return false }
        for index in 0..<tags {
            guard let offset = be32(132 + index * 12 + 4), let size = be32(132 + index * 12 + 8),
                  offset >= 132 + tags * 12, offset + size <= profile.count else { return false }
        }
        return true
    }
}
