/// PNG: walks the chunks from IHDR to IEND and keeps only what drawing the image needs — an allow-list, so text,
/// EXIF, timestamps, private and unknown chunks (anything a camera or an attacker may have put there) never pass.
/// Kept: IHDR, PLTE, IDAT, IEND, and the colour chunks tRNS, gAMA, cHRM, sRGB, iCCP, sBIT, cICP.
enum PNGSanitizer {
    static let kept: Set<String> = ["IHDR", "PLTE", "IDAT", "IEND", "tRNS", "gAMA", "cHRM", "sRGB", "iCCP", "sBIT", "cICP"]

    static func sanitize(_ data: [UInt8], budget: inout ParseBudget) throws(ImageRejection) -> SanitizedImage {
        let b = Bytes(data)
        var out = Array(data[0..<8])
        var removed: [String] = []
        var size: (Int, Int)?
        var i = 8
        while true {
            try budget.step()
            let length = try b.be32(i)
            let type = try b.fourCC(i + 4)
            let chunk = try b.slice(i..<(try Bytes.add(i, try Bytes.add(12, length))))
            if i == 8 {
                guard type == "IHDR", length == 13 else { throw .malformed("the first chunk is not IHDR") }
                size = (try Bytes.dimension(try b.be32(i + 8)), try Bytes.dimension(try b.be32(i + 12)))
            } else if type == "IHDR" {
                throw .malformed("a second IHDR")
            }
            if kept.contains(type) {
                out += chunk
            } else {
                removed.append(type)
            }
            i += 12 + length
            if type == "IEND" {
                guard let (width, height) = size else { throw .malformed("no IHDR") }
                return SanitizedImage(format: .png, width: width, height: height, decodedPixels: width * height, bytes: out, removed: removed)
            }
        }
    }
}
