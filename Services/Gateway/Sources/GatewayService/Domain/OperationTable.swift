import HTTPTypes

/// Which methods each documented path serves, read from the OpenAPI document the gateway itself serves, so a method
/// a route does not serve is answered at the edge — 405 with `Allow` — instead of travelling to a service (a
/// `TRACE` with a body used to fail inside the HTTP client as a 502).
///
/// Paths match by segments, `{name}` standing for any one segment, literal segments in any ASCII case (as the route
/// table matches prefixes). A path the document does not list is left to the service, but a method outside
/// HTTP's API methods (`TRACE`, `CONNECT`, made-up ones) is refused whatever the path.
public struct OperationTable: Sendable {
    public struct Operation: Sendable, Equatable {
        public var path: String
        public var methods: Set<String>
    }

    public let operations: [Operation]

    /// The methods an API may serve at all; anything else is 405 everywhere.
    public static let apiMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

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
    }

    /// The methods allowed at `path` (a canonical path), HEAD wherever GET is; nil when the document does not list it.
    public func allowed(at path: String) -> Set<String>? {
        let segments = path.split(separator: "/")
        // A literal match wins over a template (`/v1/moments/current` before `/v1/moments/{id}`).
        let candidates = operations.filter { Self.matches($0.path, segments) }
        guard let operation = candidates.first(where: { !$0.path.contains("{") }) ?? candidates.first else { return nil }
        var methods = operation.methods
        if methods.contains("GET") { methods.insert("HEAD") }
        return methods
    }

    /// nil when `method` may go on to the service, else the `Allow` header's methods.
    public func refusal(of method: HTTPRequest.Method, at path: String) -> [String]? {
        let name = method.rawValue.uppercased()
        if let allowed = allowed(at: path) {
            return allowed.contains(name) ? nil : Self.order(allowed)
        }
        return Self.apiMethods.contains(name) ? nil : Self.order(Self.apiMethods.subtracting(["OPTIONS"]))
    }

    static func order(_ methods: Set<String>) -> [String] {
        ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"].filter(methods.contains)
    }

    static func matches(_ template: String, _ segments: [Substring]) -> Bool {
        let parts = template.split(separator: "/")
        guard parts.count == segments.count else { return false }
        return zip(parts, segments).allSatisfy { part, segment in
            (part.hasPrefix("{") && part.hasSuffix("}")) || part.lowercased() == segment.lowercased()
        }
    }
}
