import Dispatch

/// Checks that bytes really are a JPEG, PNG, WebP or HEIC image (magic bytes *and* a structural parse, never the
/// client's content type), bounds its pixel count, and removes the metadata that could reveal a person: EXIF
/// (camera, GPS), XMP, IPTC, comments, text chunks — JPEG and PNG keep only an allow-list of what drawing needs.
/// Pixels are never decoded or re-encoded.
public struct ImageSanitizer: Sendable {
    /// Largest accepted width × height: a guard against decompression bombs (tiny files, huge canvases).
    public var maxPixels: Int
    /// Most time one image may take, whatever its bytes say. The parsers are linear in the input and capped in
    /// items, so a photo takes milliseconds; this is the bound that holds even if one of them is not.
    public var timeBudget: Duration

    public init(maxPixels: Int = 40_000_000, timeBudget: Duration = .seconds(1)) {
        self.maxPixels = maxPixels
        self.timeBudget = timeBudget
    }

    public func sanitize(_ bytes: [UInt8]) throws(ImageRejection) -> SanitizedImage {
        var budget = ParseBudget(timeBudget)
        let image: SanitizedImage
        switch ImageFormat.detect(bytes) {
        case .jpeg?: image = try JPEGSanitizer.sanitize(bytes, budget: &budget)
        case .png?: image = try PNGSanitizer.sanitize(bytes, budget: &budget)
        case .webp?: image = try WebPSanitizer.sanitize(bytes, budget: &budget)
        case .heic?: image = try HEICSanitizer.sanitize(bytes, budget: &budget)
        case nil: throw .unsupportedFormat
        }
        guard image.width > 0, image.height > 0 else { throw .malformed("the image has no size") }
        let (pixels, overflow) = image.width.multipliedReportingOverflow(by: image.height)
        guard !overflow, pixels <= maxPixels, image.decodedPixels <= maxPixels else {
            throw .tooManyPixels(width: image.width, height: image.height, limit: maxPixels)
        }
        return image
    }
}

public enum ImageFormat: String, Sendable, Codable, CaseIterable {
    case jpeg, png, webp, heic

    public var contentType: String {
        switch self {
        case .jpeg: return "image/jpeg"
        case .png: return "image/png"
        case .webp: return "image/webp"
        case .heic: return "image/heic"
        }
    }

    /// The format by its magic bytes, or nil.
    public static func detect(_ bytes: [UInt8]) -> ImageFormat? {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WEBP".utf8) { return .webp }
        if bytes.count >= 12, bytes[4..<8].elementsEqual("ftyp".utf8) {
            let brand = String(decoding: bytes[8..<12], as: UTF8.self)
            if ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"].contains(brand) { return .heic }
        }
        return nil
    }
}

public struct SanitizedImage: Sendable, Equatable {
    public var format: ImageFormat
    public var width: Int
    public var height: Int
    /// Pixels a decoder allocates (HEIC codes whole blocks and crops afterwards, so this can exceed width × height).
    public var decodedPixels: Int
    /// The image without its metadata.
    public var bytes: [UInt8]
    /// Names of what was removed (`EXIF`, `XMP`, `COM`, `tEXt`, …), for logs and tests.
    public var removed: [String]
}

public enum ImageRejection: Error, Equatable, Sendable, CustomStringConvertible {
    case unsupportedFormat
    case truncated(String)
    case malformed(String)
    case tooManyPixels(width: Int, height: Int, limit: Int)
    /// One side alone is past any image a phone takes (checked before width × height is computed).
    case sideTooLong(Int, limit: Int)
    /// Parsing took longer than `ImageSanitizer.timeBudget`.
    case overBudget(Duration)

    public var description: String {
        switch self {
        case .unsupportedFormat: return "not a JPEG, PNG, WebP or HEIC image"
        case .truncated(let what): return "the image is cut short (\(what))"
        case .malformed(let what): return "the image is damaged (\(what))"
        case .tooManyPixels(let w, let h, let limit): return "\(w)×\(h) pixels is more than the \(limit) allowed"
        case .sideTooLong(let side, let limit): return "a side of \(side) pixels is longer than the \(limit) allowed"
        case .overBudget(let budget):
            let (seconds, attoseconds) = budget.components
            return "the image took more than \(seconds * 1000 + attoseconds / 1_000_000_000_000_000) ms to check"
        }
    }
}

/// The time one image may take, checked by every loop of the parsers (`step()` once per segment, box, extent or
/// byte scanned). The clock is read every 1,024 steps: cheap enough for a loop over every byte of a scan, often
/// enough that no input runs long past the deadline.
struct ParseBudget {
    private let budget: Duration
    private let deadline: ContinuousClock.Instant
    private var steps = 0

    init(_ budget: Duration) {
        self.budget = budget
        deadline = .now + budget
    }

    @inline(__always)
    mutating func step() throws(ImageRejection) {
        steps &+= 1
        if steps & 0x3FF == 0, ContinuousClock.now > deadline { throw .overBudget(budget) }
    }
}

/// Bounds-checked big- and little-endian reads.
struct Bytes {
    let data: [UInt8]
    init(_ data: [UInt8]) { self.data = data }

    func u8(_ at: Int) throws(ImageRejection) -> Int {
        guard at >= 0, at < data.count else { throw .truncated("needed byte \(at) of \(data.count)") }
        return Int(data[at])
    }
    func be16(_ at: Int) throws(ImageRejection) -> Int { try u8(at) << 8 | u8(at + 1) }
    func be32(_ at: Int) throws(ImageRejection) -> Int { try be16(at) << 16 | be16(at + 2) }
    func be64(_ at: Int) throws(ImageRejection) -> Int { try be32(at) << 32 | be32(at + 4) }
    func le16(_ at: Int) throws(ImageRejection) -> Int { try u8(at) | u8(at + 1) << 8 }
    func le24(_ at: Int) throws(ImageRejection) -> Int { try le16(at) | u8(at + 2) << 16 }
    func le32(_ at: Int) throws(ImageRejection) -> Int { try le16(at) | le16(at + 2) << 16 }
    func beN(_ at: Int, size: Int) throws(ImageRejection) -> Int {
        switch size {
        case 0: return 0
        case 4: return try be32(at)
        case 8: return try be64(at)
        default: throw .malformed("field size \(size)")
        }
    }
    func fourCC(_ at: Int) throws(ImageRejection) -> String {
        guard at >= 0, at + 4 <= data.count else { throw .truncated("needed a tag at \(at)") }
        return String(decoding: data[at..<at + 4], as: UTF8.self)
    }
    /// A width or height; anything past a million pixels is refused here, before any arithmetic on it.
    static func dimension(_ value: Int) throws(ImageRejection) -> Int {
        guard value <= 1_000_000 else { throw .sideTooLong(value, limit: 1_000_000) }
        return value
    }

    /// `a + b` for offsets read from the file; an overflow means a damaged (or hostile) file.
    static func add(_ a: Int, _ b: Int) throws(ImageRejection) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        guard !overflow else { throw .malformed("offset overflow") }
        return sum
    }

    func slice(_ range: Range<Int>) throws(ImageRejection) -> ArraySlice<UInt8> {
        guard range.lowerBound >= 0, range.upperBound <= data.count, range.lowerBound <= range.upperBound else {
            throw .truncated("needed bytes \(range) of \(data.count)")
        }
        return data[range]
    }
}

extension ImageSanitizer {
    /// Parsing is CPU work on attacker-controlled bytes: in a server whose Swift tasks run on the network event
    /// loops it must not run there, or one upload would hold every connection of that loop. This runs it on a
    /// queue of its own and suspends the caller meanwhile.
    public func sanitizeInBackground(_ bytes: [UInt8]) async throws(ImageRejection) -> SanitizedImage {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<SanitizedImage, ImageRejection>, Never>) in
            Self.queue.async {
                do throws(ImageRejection) {
                    continuation.resume(returning: .success(try sanitize(bytes)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    private static let queue = DispatchQueue(label: "lantern.image-sanitizer", qos: .userInitiated, attributes: .concurrent)
}
