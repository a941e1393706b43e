import ImageSanitizer

/// The image sanitizers: whatever the bytes, an answer (an image or a rejection) and never a crash; an accepted
/// image is of the format its magic bytes say, within the pixel limit, made only of what the format's allow-list
/// keeps (walked here independently of the sanitizer), and a fixed point: sanitizing it again changes nothing.
/// (`scripts/fuzz.sh` then decodes the corpus with Pillow, an independent decoder: what decoded before must
/// decode after, at the same size.)
enum ImageChecks {
    static let sanitizer = ImageSanitizer(maxPixels: 40_000_000, timeBudget: .seconds(30))

    static func check(_ bytes: [UInt8], as format: ImageFormat) throws(FuzzFinding) -> String {
        // Inputs of another format belong to another target; returning early keeps this one's corpus focused.
        guard ImageFormat.detect(bytes) == format else { return "not \(format)" }
        let image: SanitizedImage
        do {
            image = try sanitizer.sanitize(bytes)
        } catch {
            if case .overBudget = error { throw FuzzFinding("\(format): \(bytes.count) bytes took over the 30 s budget") }
            return "refused: \(error)"
        }
        try expect(image.format == format && ImageFormat.detect(image.bytes) == format, "\(format): output is not \(format)")
        try expect(image.width > 0 && image.height > 0 && image.width * image.height <= sanitizer.maxPixels,
                   "\(format): accepted \(image.width)×\(image.height)")
        switch format {
        case .jpeg: try jpegSegments(image.bytes)
        case .png: try pngChunks(image.bytes)
        case .webp: try webpChunks(image.bytes)
        case .heic: try expect(image.bytes.count == bytes.count, "heic: cleaned in place, yet the size changed")
        }
        let again: SanitizedImage
        do { again = try sanitizer.sanitize(image.bytes) } catch {
            throw FuzzFinding("\(format): the sanitizer refuses its own output: \(error)")
        }
        try expect(again.bytes == image.bytes, "\(format): sanitizing the output again changed it")
        try expect(again.width == image.width && again.height == image.height, "\(format): the size changed on a second pass")
        return "accepted \(image.width)×\(image.height), removed \(image.removed)"
    }

    static func be16(_ b: [UInt8], _ at: Int) -> Int? { at + 2 <= b.count ? Int(b[at]) << 8 | Int(b[at + 1]) : nil }
    static func be32(_ b: [UInt8], _ at: Int) -> Int? {
        guard let high = be16(b, at), let low = be16(b, at + 2) else { return nil }
        return high << 16 | low
    }

    /// SOI, then only the tables, one frame header, scans (with restart markers in them), JFIF APP0 of 16 bytes,
    /// Adobe APP14 of 14, ICC APP2, and EOI as the last two bytes.
    static func jpegSegments(_ b: [UInt8]) throws(FuzzFinding) {
        try expect(b.starts(with: [0xFF, 0xD8]), "jpeg: no SOI")
        var i = 2, frames = 0
        while i < b.count {
            try expect(b[i] == 0xFF && i + 1 < b.count, "jpeg: expected a marker at \(i)")
            let marker = b[i + 1]
            if marker == 0xD9 {
                try expect(i + 2 == b.count, "jpeg: \(b.count - i - 2) bytes after EOI")
                return
            }
            if (0xD0...0xD7).contains(marker) || marker == 0x01 { i += 2; continue }
            guard let length = be16(b, i + 2), length >= 2, i + 2 + length <= b.count else {
                throw FuzzFinding("jpeg: segment 0x\(String(marker, radix: 16)) at \(i) runs past the end")
            }
            let payload = b[(i + 4)..<(i + 2 + length)]
            switch marker {
            case 0xC0...0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF: frames += 1
            case 0xC4, 0xCC, 0xDB, 0xDC, 0xDD, 0xDA: break
            case 0xE0: try expect(length == 16 && payload.starts(with: Array("JFIF\0".utf8)), "jpeg: an APP0 that is not a rebuilt JFIF")
            case 0xEE: try expect(length == 14 && payload.starts(with: Array("Adobe".utf8)), "jpeg: an APP14 that is not a rebuilt Adobe")
            case 0xE2: try expect(payload.starts(with: Array("ICC_PROFILE\0".utf8)), "jpeg: an APP2 that is not ICC")
            default: throw FuzzFinding("jpeg: marker 0x\(String(marker, radix: 16)) is not on the allow-list")
            }
            i += 2 + length
            if marker == 0xDA {  // entropy-coded data up to the next marker that is not a stuffed byte or a restart
                while i + 1 < b.count, !(b[i] == 0xFF && b[i + 1] != 0x00 && !(0xD0...0xD7).contains(b[i + 1]) && b[i + 1] != 0xFF) { i += 1 }
                while i + 1 < b.count, b[i] == 0xFF, b[i + 1] == 0xFF { i += 1 }
            }
        }
        try expect(frames == 1, "jpeg: \(frames) frame headers")
        throw FuzzFinding("jpeg: no EOI")
    }

    static let pngKept: Set<String> = ["IHDR", "PLTE", "IDAT", "IEND", "tRNS", "gAMA", "cHRM", "sRGB", "iCCP", "sBIT", "cICP"]

    /// The signature, then chunks on the allow-list only, IHDR first and IEND last with nothing after it.
    static func pngChunks(_ b: [UInt8]) throws(FuzzFinding) {
        var i = 8, first = true
        while true {
            guard let length = be32(b, i), i + 12 + length <= b.count else { throw FuzzFinding("png: chunk at \(i) runs past the end") }
            let type = String(decoding: b[(i + 4)..<(i + 8)], as: UTF8.self)
            try expect(pngKept.contains(type), "png: chunk \(type) is not on the allow-list")
            try expect(!first || type == "IHDR", "png: the first chunk is \(type)")
            first = false
            i += 12 + length
            if type == "IEND" {
                try expect(i == b.count, "png: \(b.count - i) bytes after IEND")
                return
            }
        }
    }

    /// RIFF size equal to the file, no EXIF or XMP chunk, and the VP8X flags for them cleared.
    static func webpChunks(_ b: [UInt8]) throws(FuzzFinding) {
        let riff = Int(b[4]) | Int(b[5]) << 8 | Int(b[6]) << 16 | Int(b[7]) << 24
        try expect(riff + 8 == b.count, "webp: RIFF says \(riff + 8) bytes, the file has \(b.count)")
        var i = 12
        while i + 8 <= b.count {
            let type = String(decoding: b[i..<(i + 4)], as: UTF8.self)
            let length = Int(b[i + 4]) | Int(b[i + 5]) << 8 | Int(b[i + 6]) << 16 | Int(b[i + 7]) << 24
            try expect(type != "EXIF" && type != "XMP ", "webp: a \(type) chunk survived")
            if type == "VP8X" { try expect(b[i + 8] & 0x0C == 0, "webp: VP8X still flags EXIF or XMP") }
            i += 8 + length + (length & 1)
        }
    }
}
