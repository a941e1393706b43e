import Foundation
import LanternCore

/// The one form of a request path the gateway routes, rate-limits and forwards, decided once at the edge.
///
/// Upstream routers are more forgiving than a prefix match: Hummingbird's skips empty segments, so
/// `/v1/pairing//join` would reach the join handler while escaping the limits of `/v1/pairing/join`. Here a path
/// is reduced to that same form first — empty segments (`//`, a trailing `/`) are dropped — and whatever could
/// mean something else to another parser is refused: `.` and `..` segments, a backslash, and percent-encoded
/// `/`, `\`, `.` or control characters (400 `invalid_path`). A segment `internal` (any case) is no public
/// route (404). Case is left as sent; the route table matches prefixes in any case (`RouteTable.match`).
public struct CanonicalPath: Sendable, Equatable {
    /// The normalised path, starting with `/`; what is forwarded (the query goes along unchanged).
    public let path: String

    public init(_ raw: String) throws(PathRefusal) {
        var raw = raw
        // `withUTF8` rethrows untyped errors: the closure hands back a `Result` instead.
        path = try raw.withUTF8 { bytes in Result { () throws(PathRefusal) -> String in
            guard bytes.first == UInt8(ascii: "/") else { throw Self.invalid("The path must start with '/'.") }
            // Runs on every request: bytes and ranges, no `String` per segment. Most paths are already canonical
            // and come back as they are.
            let segments = PathSegments.ranges(bytes)
            for range in segments {
                let segment = UnsafeBufferPointer(rebasing: bytes[range])
                if segment.contains(UInt8(ascii: "%")) { try Self.checkEncoding(segment) }
                if segment.elementsEqual(".".utf8) || segment.elementsEqual("..".utf8) || segment.contains(UInt8(ascii: "\\")) {
                    throw Self.invalid("The path must not contain '.' or '..' segments or a backslash.")
                }
                if Self.isInternal(segment) { throw PathRefusal.internalRoute }
            }
            let canonicalLength = segments.reduce(0) { $0 + 1 + $1.count }
            if canonicalLength == bytes.count { return String(decoding: bytes, as: UTF8.self) }
            var canonical: [UInt8] = []
            canonical.reserveCapacity(max(canonicalLength, 1))
            for range in segments { canonical.append(UInt8(ascii: "/")); canonical.append(contentsOf: bytes[range]) }
            if canonical.isEmpty { canonical.append(UInt8(ascii: "/")) }
            return String(decoding: canonical, as: UTF8.self)
        } }.get()
    }

    /// `internal` in any case, percent-encoded or not.
    private static func isInternal(_ segment: UnsafeBufferPointer<UInt8>) -> Bool {
        let word = Array("internal".utf8)
        var matched = 0, i = 0
        while i < segment.count {
            var byte = segment[i]
            if byte == UInt8(ascii: "%"), i + 2 < segment.count, let high = digit(segment[i + 1]), let low = digit(segment[i + 2]) {
                byte = high << 4 | low
                i += 3
            } else {
                i += 1
            }
            guard matched < word.count, (byte >= 0x41 && byte <= 0x5A ? byte + 32 : byte) == word[matched] else { return false }
            matched += 1
        }
        return matched == word.count
    }

    /// Percent-encoding may spell letters and digits, never a separator, a dot or a control character.
    private static func checkEncoding(_ bytes: UnsafeBufferPointer<UInt8>) throws(PathRefusal) {
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%") {
                guard let value = hexValue(bytes, at: i + 1) else { throw invalid("The path has a malformed percent-encoding.") }
                if value < 0x20 || value == 0x7F || value == UInt8(ascii: "/") || value == UInt8(ascii: "\\") || value == UInt8(ascii: ".") {
                    throw invalid("The path must not percent-encode '/', '\\', '.' or control characters.")
                }
                i += 3
            } else {
                i += 1
            }
        }
    }

    private static func hexValue(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt8? {
        guard index + 1 < bytes.count, let high = digit(bytes[index]), let low = digit(bytes[index + 1]) else { return nil }
        return high << 4 | low
    }

    private static func digit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func invalid(_ detail: String) -> PathRefusal {
        .invalid(detail)
    }
}

/// Why a path has no canonical form (the proxy answers 400 `invalid_path`), or names no public route (404).
public enum PathRefusal: Error, Equatable {
    /// What is wrong with it, for a person.
    case invalid(String)
    /// A segment `internal`.
    case internalRoute
}

/// 400 `invalid_path`, or 404 `route_not_found` for an internal route: what the gateway answers.
extension PathRefusal: ProblemConvertible {
    public var problem: Problem {
        switch self {
        case .invalid(let detail): Problem.badRequest(detail, code: "invalid_path")
        case .internalRoute: Problem.notFound("No route for this path.", code: "route_not_found")
        }
    }
}
