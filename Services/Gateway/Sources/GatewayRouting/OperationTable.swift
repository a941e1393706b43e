import Foundation
import HTTPTypes

/// Which methods each documented path serves, read from the OpenAPI document the gateway itself serves, so a method
/// a route does not serve is answered at the edge — 405 with `Allow` — instead of travelling to a service (a
/// `TRACE` with a body used to fail inside the HTTP client as a 502).
///
/// Paths match by segments, `{name}` standing for any one segment, literal segments in any ASCII case (as the route
/// table matches prefixes). A path the document does not list is left to the service, but a method outside
/// HTTP's API methods (`TRACE`, `CONNECT`, made-up ones) is refused whatever the path. Methods are compared as
/// sent: RFC 9110 §9.1 makes them case-sensitive.
///
/// This runs on every proxied request, so the document is compiled once into templates grouped by segment count
/// and matched byte by byte (matching `String`s segment by segment was 30 % of the gateway's instructions).
public struct OperationTable: Sendable {
    public struct Operation: Sendable, Equatable {
        public var path: String
        public var methods: Set<String>
    }

    /// One documented path, ready to match: literal segments lowercased, the answer precomputed.
    struct Template: Sendable {
        enum Segment: Sendable { case literal([UInt8]), parameter }
        var segments: [Segment]
        /// The methods served, HEAD wherever GET is.
        var allowed: Set<String>
        /// `allowed` in the order of an `Allow` header.
        var allow: [String]
        /// The document's path (`/v1/reports/{reportId}`): the route label of the request metrics.
        var path: String
    }

    public let operations: [Operation]
    /// Templates by number of segments; within a count, fully literal paths first (`/v1/moments/current` before
    /// `/v1/moments/{id}`), then document order. The first that matches answers.
    private let templates: [Int: [Template]]

    /// The methods an API may serve at all; anything else is 405 everywhere.
    public static let apiMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    private static let notAnAPIMethod = order(apiMethods.subtracting(["OPTIONS"]))

    /// Reads `paths:` of an OpenAPI document in the layout of docs/api/openapi.yaml (two-space path keys, four-space
    /// method keys), without a YAML library; a test checks it finds every operation of the document.
    public init(openAPI text: String) {
        var result: [Operation] = []
        var inPaths = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("paths:") { inPaths = true; continue }
            if inPaths, let first = line.first, first != " ", first != "#" { break }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                result.append(Operation(path: String(line.dropFirst(2).dropLast()), methods: []))
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), let last = result.indices.last {
                let key = line.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: .init(charactersIn: ":")).uppercased()
                if ["GET", "PUT", "POST", "PATCH", "DELETE", "OPTIONS", "HEAD"].contains(key) { result[last].methods.insert(key) }
            }
        }
        operations = result
        var templates: [Int: [Template]] = [:]
        for isLiteral in [true, false] {
            for operation in result where !operation.path.contains("{") == isLiteral {
                let segments: [Template.Segment] = operation.path.split(separator: "/").map { part in
                    part.hasPrefix("{") && part.hasSuffix("}") ? .parameter : .literal(part.utf8.map(Self.lower))
                }
                var allowed = operation.methods
                if allowed.contains("GET") { allowed.insert("HEAD") }
                templates[segments.count, default: []].append(Template(segments: segments, allowed: allowed, allow: Self.order(allowed),
                                                                      path: operation.path))
            }
        }
        self.templates = templates
    }

    /// The methods allowed at `path` (a canonical path), HEAD wherever GET is; nil when the document does not list it.
    public func allowed(at path: String) -> Set<String>? {
        template(for: path)?.allowed
    }

    /// nil when `method` may go on to the service, else the `Allow` header's methods.
    public func refusal(of method: HTTPRequest.Method, at path: String) -> [String]? {
        check(method, at: path).refusal
    }

    /// `refusal(of:at:)` and the document's path template for `path` (nil when the document does not list it), from
    /// one match.
    public func check(_ method: HTTPRequest.Method, at path: String) -> (refusal: [String]?, template: String?) {
        let name = method.rawValue
        if let template = template(for: path) {
            return (template.allowed.contains(name) ? nil : template.allow, template.path)
        }
        return (Self.apiMethods.contains(name) ? nil : Self.notAnAPIMethod, nil)
    }

    private func template(for path: String) -> Template? {
        var path = path
        return path.withUTF8 { bytes -> Template? in
            let bounds = PathSegments.ranges(bytes)
            guard let candidates = templates[bounds.count] else { return nil }
            return candidates.first { template in
                zip(template.segments, bounds).allSatisfy { segment, range in
                    guard case .literal(let literal) = segment else { return true }
                    return literal.count == range.count
                        && zip(literal, bytes[range]).allSatisfy { $0 == Self.lower($1) }
                }
            }
        }
    }

    static func order(_ methods: Set<String>) -> [String] {
        ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"].filter(methods.contains)
    }

    private static func lower(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }
}
