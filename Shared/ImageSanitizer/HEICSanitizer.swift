/// HEIC/HEIF (ISO base media file format): reads the `meta` box to find the image size (`ispe`) and the items
/// that carry metadata — `Exif` items and `mime` items of type XMP — and overwrites them in place with an empty
/// but valid document (an EXIF block with no entries, an empty XMP packet) padded with filler. Offsets stay valid
/// because nothing moves, and readers that parse the metadata still find something well-formed.
enum HEICSanitizer {
    struct Box {
        var type: String
        var start: Int
        var payload: Int  // first byte after the header
        var end: Int
    }

    static func boxes(_ b: Bytes, in range: Range<Int>, budget: inout ParseBudget) throws(ImageRejection) -> [Box] {
        var result: [Box] = []
        var i = range.lowerBound
        while i + 8 <= range.upperBound {
            try budget.step()
            var size = try b.be32(i)
            let type = try b.fourCC(i + 4)
            var header = 8
            if size == 1 {
                size = try b.be64(i + 8)
                header = 16
            } else if size == 0 {
                size = range.upperBound - i
            }
            guard size >= header, try Bytes.add(i, size) <= range.upperBound else { throw .truncated("box \(type) runs past its parent") }
            result.append(Box(type: type, start: i, payload: i + header, end: i + size))
            i += size
        }
        return result
    }

    /// HEIF Exif item: a 4-byte offset to the TIFF header (0), then a big-endian TIFF header and one IFD with no
    /// entries and no next IFD.
    static let emptyExif: [UInt8] = [0, 0, 0, 0, 0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0]
    static let emptyXMP: [UInt8] = Array(#"<x:xmpmeta xmlns:x="adobe:ns:meta/"/>"#.utf8)

    /// A photo has a handful of items (image tiles, a thumbnail, Exif, XMP) and each a few extents; far more is
    /// not a photo from a phone but an attempt to make the parser work.
    static let maxItems = 4_096
    static let maxExtents = 8_192

    static func sanitize(_ data: [UInt8], budget: inout ParseBudget) throws(ImageRejection) -> SanitizedImage {
        let b = Bytes(data)
        let top = try boxes(b, in: 0..<data.count, budget: &budget)
        guard let meta = top.first(where: { $0.type == "meta" }) else { throw .malformed("no meta box") }
        guard meta.payload + 4 <= meta.end else { throw .malformed("meta box too short") }
        let children = try boxes(b, in: (meta.payload + 4)..<meta.end, budget: &budget)  // meta is a full box
        var metadataItems: [Int: String] = [:]
        if let iinf = children.first(where: { $0.type == "iinf" }) {
            let version = try b.u8(iinf.payload)
            let first = iinf.payload + 4 + (version == 0 ? 2 : 4)
            guard first <= iinf.end else { throw .malformed("iinf box too short") }
            // Item IDs are unique in a file (ISO/IEC 14496-12 §8.11.6); a crafted one that declares its image item
            // again as XMP would have the clean-up overwrite the picture (found by `make fuzz`, with Pillow).
            var declared: Set<Int> = []
            for infe in try boxes(b, in: first..<iinf.end, budget: &budget) where infe.type == "infe" {
                let v = try b.u8(infe.payload)
                var p = infe.payload + 4
                let itemID = v <= 2 ? try b.be16(p) : try b.be32(p)
                guard declared.insert(itemID).inserted else { throw .malformed("item \(itemID) declared twice in iinf") }
                guard v >= 2 else { continue }
                p += v == 2 ? 2 : 4
                p += 2  // protection index
                let itemType = try b.fourCC(p)
                p += 4
                if itemType == "Exif" {
                    metadataItems[itemID] = "EXIF"
                } else if itemType == "mime" {
                    while p < infe.end, data[p] != 0 { try budget.step(); p += 1 }  // item name
                    let typeStart = p + 1
                    var q = typeStart
                    while q < infe.end, data[q] != 0 { try budget.step(); q += 1 }
                    if typeStart < q, String(decoding: data[typeStart..<q], as: UTF8.self).contains("rdf+xml") { metadataItems[itemID] = "XMP" }
                }
            }
        }
        // The coded size (`ispe`, whole coding blocks) bounds what a decoder allocates; the clean aperture
        // (`clap`), when present, is the size people see.
        var size: (Int, Int)?
        var visible: (Int, Int)?
        if let iprp = children.first(where: { $0.type == "iprp" }),
           let ipco = try boxes(b, in: iprp.payload..<iprp.end, budget: &budget).first(where: { $0.type == "ipco" }) {
            for property in try boxes(b, in: ipco.payload..<ipco.end, budget: &budget) {
                if property.type == "ispe" {
                    let width = try Bytes.dimension(try b.be32(property.payload + 4)), height = try Bytes.dimension(try b.be32(property.payload + 8))
                    if width * height > (size.map { $0.0 * $0.1 } ?? -1) { size = (width, height) }
                } else if property.type == "clap", visible == nil {
                    let wN = try b.be32(property.payload), wD = try b.be32(property.payload + 4)
                    let hN = try b.be32(property.payload + 8), hD = try b.be32(property.payload + 12)
                    if wD > 0, hD > 0 { visible = (try Bytes.dimension(wN / wD), try Bytes.dimension(hN / hD)) }
                }
            }
        }
        guard let (codedWidth, codedHeight) = size else { throw .malformed("no image size (ispe)") }
        let (width, height) = visible ?? (codedWidth, codedHeight)
        var out = data
        var removed: [String] = []
        if !metadataItems.isEmpty, let iloc = children.first(where: { $0.type == "iloc" }) {
            // Where the metadata lies, collected first and written once: a crafted `iloc` can name the same bytes
            // (or, with zero lengths, the rest of the file) in thousands of extents, and rewriting per extent would
            // take time growing with the square of the file.
            var ranges: [(range: Range<Int>, kind: String)] = []
            let idat = children.first(where: { $0.type == "idat" })
            let dataAreas = (top.filter { $0.type == "mdat" } + (idat.map { [$0] } ?? [])).map { $0.payload..<$0.end }
            let version = try b.u8(iloc.payload)
            var p = iloc.payload + 4
            let sizes = try b.u8(p), more = try b.u8(p + 1)
            let offsetSize = sizes >> 4, lengthSize = sizes & 0xF, baseSize = more >> 4
            let indexSize = (version == 1 || version == 2) ? more & 0xF : 0
            p += 2
            let count = version < 2 ? try b.be16(p) : try b.be32(p)
            p += version < 2 ? 2 : 4
            guard count <= Self.maxItems else { throw .malformed("more than \(Self.maxItems) items in iloc") }
            var extentsSeen = 0
            var located: Set<Int> = []
            // The bytes of every other item (the picture's coded data, a thumbnail): no metadata extent may share them.
            var others: [Range<Int>] = []
            for _ in 0..<count {
                try budget.step()
                let itemID = version < 2 ? try b.be16(p) : try b.be32(p)
                p += version < 2 ? 2 : 4
                guard located.insert(itemID).inserted else { throw .malformed("item \(itemID) located twice in iloc") }
                var method = 0
                if version == 1 || version == 2 { method = try b.be16(p) & 0xF; p += 2 }
                p += 2  // data reference index
                let base = try b.beN(p, size: baseSize)
                p += baseSize
                let extents = try b.be16(p)
                p += 2
                extentsSeen += extents
                guard extentsSeen <= Self.maxExtents else { throw .malformed("more than \(Self.maxExtents) extents in iloc") }
                for _ in 0..<extents {
                    try budget.step()
                    p += indexSize
                    let offset = try b.beN(p, size: offsetSize)
                    p += offsetSize
                    let length = try b.beN(p, size: lengthSize)
                    p += lengthSize
                    let kind = metadataItems[itemID]
                    guard method == 0 || method == 1 else {
                        if kind == nil { continue }
                        throw .malformed("metadata item stored by reference")
                    }
                    let origin = method == 1 ? (idat?.payload ?? 0) : 0
                    let start = try Bytes.add(origin, try Bytes.add(base, offset))
                    let end = length == 0 ? (method == 1 ? (idat?.end ?? data.count) : data.count) : try Bytes.add(start, length)
                    guard let kind else {
                        // Where another item lies is the decoder's concern; only its overlap with metadata is ours.
                        if start < end { others.append(start..<end) }
                        continue
                    }
                    guard start >= 0, start <= end, end <= data.count else { throw .truncated("metadata item outside the file") }
                    // Item data lives in `mdat` (or `idat`); an extent over the boxes themselves would have the
                    // clean-up overwrite the file's structure (found by `make fuzz`, Tests/Fuzz/Regressions/heic).
                    guard dataAreas.contains(where: { $0.lowerBound <= start && end <= $0.upperBound }) else {
                        throw .malformed("a metadata item outside the media data")
                    }
                    ranges.append((start..<end, kind))
                    if !removed.contains(kind) { removed.append(kind) }
                }
            }
            try Self.refuseOverlap(ranges.map(\.range), with: others, budget: &budget)
            // Each byte is overwritten at most once: ranges in order, skipping what an earlier one already covered.
            var written = 0
            for (range, kind) in ranges.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) {
                let replacement = kind == "EXIF" ? Self.emptyExif : Self.emptyXMP
                let filler: UInt8 = kind == "EXIF" ? 0 : 0x20
                let fits = range.count >= replacement.count
                for k in max(range.lowerBound, written)..<max(range.upperBound, written) {
                    try budget.step()
                    let index = k - range.lowerBound
                    out[k] = fits && index < replacement.count ? replacement[index] : filler
                }
                written = max(written, range.upperBound)
            }
        }
        return SanitizedImage(format: .heic, width: width, height: height, decodedPixels: codedWidth * codedHeight, bytes: out, removed: removed)
    }

    /// Refuses metadata extents that share a byte with another item's extents: overwriting them would damage that
    /// item, and leaving them would keep the metadata. Sorted sweeps, so thousands of extents stay linear-ish.
    static func refuseOverlap(_ metadata: [Range<Int>], with others: [Range<Int>], budget: inout ParseBudget) throws(ImageRejection) {
        guard !metadata.isEmpty, !others.isEmpty else { return }
        let sortedOthers = others.sorted { $0.lowerBound < $1.lowerBound }
        var reach: [Int] = []  // reach[i]: the furthest end among sortedOthers[0...i]
        reach.reserveCapacity(sortedOthers.count)
        for range in sortedOthers { reach.append(max(reach.last ?? 0, range.upperBound)) }
        for range in metadata where !range.isEmpty {
            try budget.step()
            // The last other range starting before this one ends; any earlier range reaching past its start overlaps.
            var low = 0, high = sortedOthers.count
            while low < high {
                let middle = (low + high) / 2
                if sortedOthers[middle].lowerBound < range.upperBound { low = middle + 1 } else { high = middle }
            }
            if low > 0, reach[low - 1] > range.lowerBound {
                throw .malformed("a metadata item shares bytes with an image item")
            }
        }
    }
}
