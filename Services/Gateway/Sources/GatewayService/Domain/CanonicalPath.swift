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
struct CanonicalPath: Sendable, Equatable {
    /// The normalised path, starting with `/`; what is forwarded (the query goes along unchanged).
    let path: String

    init(_ raw: String) throws(Problem) {
        guard raw.first == "/" else { throw Self.invalid("The path must start with '/'.") }
        var segments: [Substring] = []
        for segment in raw.split(separator: "/", omittingEmptySubsequences: true) {
            if segment.contains("%") { try Self.checkEncoding(segment) }
            if segment == "." || segment == ".." || segment.contains("\\") {
                throw Self.invalid("The path must not contain '.' or '..' segments or a backslash.")
            }
            if (segment.removingPercentEncoding ?? String(segment)).lowercased() == "internal" { throw Problem.notFound("No route for this path.", code: "route_not_found") }
            segments.append(segment)
        }
        path = "/" + segments.joined(separator: "/")
    }

    /// Percent-encoding may spell letters and digits, never a separator, a dot or a control character.
    private static func checkEncoding(_ segment: Substring) throws(Problem) {
        let bytes = Array(segment.utf8)
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

    private static func hexValue(_ bytes: [UInt8], at index: Int) -> UInt8? {
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

    private static func invalid(_ detail: String) -> Problem {
        Problem.badRequest(detail, code: "invalid_path")
    }
}
