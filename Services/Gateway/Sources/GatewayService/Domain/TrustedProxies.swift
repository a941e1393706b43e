#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The address ranges of the proxies in front of the gateway (`TRUSTED_PROXIES`): only a connection from one of
/// them may say, in `X-Forwarded-For`, who the client is.
///
/// Believing the header from anyone lets every client pick its own address and walk out of the per-address limits,
/// so the client is found as nginx's `real_ip_recursive` and Envoy's trusted hops find it: start from the peer; while
/// the address in hand is a trusted proxy, step one entry left in `X-Forwarded-For` (each proxy appends the
/// address it saw); the first address that is not a trusted proxy is the client. Entries left of it were written
/// by the client and are never read. An entry that is not an address ends the walk at the last proxy.
public struct TrustedProxies: Sendable {
    struct Range: Sendable, Equatable {
        var bytes: [UInt8]  // 4 or 16
        var prefixLength: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var left = prefixLength
            for (a, b) in zip(address, bytes) where left > 0 {
                let bits = min(8, left)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if a & mask != b & mask { return false }
                left -= bits
            }
            return true
        }
    }

    public struct InvalidEntry: Error, CustomStringConvertible {
        public let entry: String
        public var description: String { "'\(entry)' is not an IP address or a CIDR range (such as 10.0.0.0/8 or fd00::/8)" }
    }

    let ranges: [Range]

    public static let none = TrustedProxies(ranges: [])

    init(ranges: [Range]) { self.ranges = ranges }

    /// - Parameter entries: addresses (`10.1.2.3`, `::1`) and CIDR ranges (`10.0.0.0/8`, `fd00::/8`).
    public init(_ entries: [String]) throws {
        ranges = try entries.map { entry in
            let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let bytes = Self.bytes(String(parts[0])) else { throw InvalidEntry(entry: entry) }
            let length: Int
            if parts.count == 2 {
                guard let given = Int(parts[1]), (0...bytes.count * 8).contains(given), parts[1].allSatisfy(\.isASCII) else {
                    throw InvalidEntry(entry: entry)
                }
                length = given
            } else {
                length = bytes.count * 8
            }
            return Range(bytes: bytes, prefixLength: length)
        }
    }

    public var isEmpty: Bool { ranges.isEmpty }

    public func contains(_ address: String) -> Bool {
        guard !ranges.isEmpty, let bytes = Self.bytes(address) else { return false }
        return ranges.contains { $0.contains(bytes) }
    }

    /// The client's address for a request from `peer` carrying `forwardedFor` (every `X-Forwarded-For` field, in
    /// order).
    public func clientAddress(peer: String, forwardedFor: [String]) -> String {
        guard contains(peer) else { return peer }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingSpaces }
        var client = peer
        for hop in hops.reversed() {
            guard Self.bytes(hop) != nil else { break }
            client = hop
            if !contains(hop) { break }
        }
        return client
    }

    /// The 4 or 16 bytes of an IPv4 or IPv6 address; an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, what a
    /// dual-stack listener reports) counts as its IPv4 address.
    static func bytes(_ text: String) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return Array(bytes[12...]) }
        return bytes
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
