import Foundation
import GatewayRouting
import HTTPTypes

/// The gateway's routing of a request's path and method (`CanonicalPath`, `RouteTable`, `OperationTable`), decided at
/// the edge for every request before any limit or token: whatever the bytes, a path is refused or has one canonical
/// form that no other parser could read differently, that form is stable, its route is the most specific entry
/// (so no spelling escapes the stricter limit of a longer prefix), the service is sent the same path, and a method
/// outside the API's is never let through. The first byte picks the method; the rest is the path as sent.
enum PathChecks {
    static let routes = RouteTable.lantern
    static let methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND", "CONNECT"]
    /// The API document the gateway serves (its copy is `docs/api/openapi.yaml`'s).
    static let operations = OperationTable(openAPI: (try? String(contentsOf: FuzzInputs.root.appendingPathComponent("docs/api/openapi.yaml"),
                                                                 encoding: .utf8)) ?? "openapi: 3.1.0\npaths:\n  /v1/me:\n    get: {}\n")

    static func check(_ bytes: [UInt8]) throws(FuzzFinding) -> String {
        let method = methods[Int(bytes.first ?? 0) % methods.count]
        // NIO hands the request target on as text, invalid UTF-8 repaired.
        let raw = String(decoding: bytes.dropFirst(), as: UTF8.self)
        let path: String
        do throws(PathRefusal) {
            path = try CanonicalPath(raw).path
        } catch {
            return "refused: \(error)"
        }
        // Bytes, not characters: a `/` followed by a combining mark is one `Character` to `String`, two bytes on the wire.
        let utf8 = Array(path.utf8), slash = UInt8(ascii: "/")
        try expect(utf8.first == slash && !zip(utf8, utf8.dropFirst()).contains { $0 == slash && $1 == slash }
                   && (utf8.count == 1 || utf8.last != slash),
                   "\(raw.debugDescription) → \(path.debugDescription): not one form")
        try expect((try? CanonicalPath(path).path) == path, "\(raw.debugDescription) → \(path.debugDescription): not stable")
        for segment in utf8.split(separator: slash).map({ String(decoding: $0, as: UTF8.self) }) {
            let lowered = segment.lowercased()
            try expect(segment != "." && segment != ".." && !segment.contains("\\") && lowered != "internal"
                       && segment.removingPercentEncoding?.lowercased() != "internal",
                       "\(raw.debugDescription) → segment \(segment.debugDescription) let through")
            for encoded in ["%2f", "%5c", "%2e", "%00", "%0a", "%0d", "%7f"] {
                try expect(!lowered.contains(encoded), "\(raw.debugDescription) → \(encoded) let through in \(segment.debugDescription)")
            }
        }
        var answer = "\(method) \(path)"
        if let entry = routes.match(path) {
            // The most specific entry: none with a longer prefix matches too.
            for other in routes.entries where other.prefix.utf8.count > entry.prefix.utf8.count {
                try expect(!matches(other.prefix, path), "\(path.debugDescription) routed by \(entry.prefix), but \(other.prefix) matches too")
            }
            let forwarded = routes.forwardedPath(path, for: entry)
            try expect(forwarded.utf8.starts(with: entry.prefix.utf8) && forwarded.utf8.count == path.utf8.count
                       && (try? CanonicalPath(forwarded).path) == forwarded,
                       "\(path.debugDescription) forwarded as \(forwarded.debugDescription)")
            answer += " → \(entry.service) \(forwarded)"
        } else {
            try expect(!routes.entries.contains { matches($0.prefix, path) }, "\(path.debugDescription) unrouted, but an entry matches")
        }
        guard let requestMethod = HTTPRequest.Method(method) else { return answer }
        let check = operations.check(requestMethod, at: path)
        if !OperationTable.apiMethods.contains(method) {
            try expect(check.refusal != nil, "\(method) \(path.debugDescription) let through")
        }
        return answer + (check.refusal.map { " 405 (allow \($0.joined(separator: ", ")))" } ?? " allowed")
    }

    /// The table's own rule, written out: the prefix in any ASCII case, then the end or `/`.
    static func matches(_ prefix: String, _ path: String) -> Bool {
        let head = path.utf8.prefix(prefix.utf8.count)
        guard head.count == prefix.utf8.count, zip(head, prefix.utf8).allSatisfy({ lower($0) == lower($1) }) else { return false }
        return path.utf8.count == prefix.utf8.count || path.utf8.dropFirst(prefix.utf8.count).first == UInt8(ascii: "/")
    }

    static func lower(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte + 32 : byte }
}
