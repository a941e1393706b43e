import Foundation

/// The names a listener answers to: its defence against DNS rebinding (issue #23 item 4).
///
/// A web page on `evil.example` can have its name resolve to 127.0.0.1 after it loaded; from then on the browser
/// sends the page's requests to the local stack as if they were same-origin, and can read the answers. They still
/// say `Host: evil.example`, though, and no name here matches that, so they are answered 421 before any route.
///
/// Names are compared without their port (the attacker's page uses the listener's port anyway, and a port-forward
/// may change it), case-insensitively and without a trailing dot; IPv6 addresses are written in brackets (`[::1]`).
/// Every listener answers to `localhost`, `127.0.0.1` and `[::1]`, and to the address it binds to (`HTTP_HOST`,
/// `OPS_HOST`) unless that is every interface (`0.0.0.0`, `::`); anything else is listed in `ALLOWED_HOSTS`. Every
/// listener of every process checks it (`ProcessSettings.apiHosts`, `operationsHosts`) in development, where the
/// stack runs on a developer's machine beside their browser, and wherever `ALLOWED_HOSTS` is set; a deployment
/// usually leaves it unset, since its load balancer decides which names reach the gateway and the services are
/// called by their cluster names and probed by address.
public struct AllowedHosts: Sendable, Equatable {
    /// The names, lower-cased, without port or trailing dot; IPv6 addresses in brackets.
    public private(set) var names: Set<String>

    /// What every local listener is called: the loopback name and addresses.
    public static let loopback: Set<String> = ["localhost", "127.0.0.1", "[::1]"]

    /// The loopback names alone: a development listener on 127.0.0.1 with nothing listed.
    public static let local = AllowedHosts(names: loopback)

    private init(names: Set<String>) { self.names = names }

    /// The loopback names, `host` (the address the listener binds to; ignored when it is every interface or not a
    /// name) and `extra` (`ALLOWED_HOSTS`: names or addresses without scheme, port or path; anything else is a
    /// `ConfigurationError` naming `variable`).
    public init(host: String? = nil, extra: [String] = [], variable: String = "ALLOWED_HOSTS") throws {
        var names = Self.loopback
        if let host, let name = Self.configuredName(host), !Self.everyInterface.contains(name) { names.insert(name) }
        for entry in extra {
            guard let name = Self.configuredName(entry) else {
                throw ConfigurationError(variable: variable,
                                         message: "must list host names or addresses without scheme, port or path (e.g. 192.168.1.20,mybox.local), got '\(entry)'")
            }
            names.insert(name)
        }
        self.names = names
    }

    /// Whether `host` (a `Host` header's value: `name`, `name:port`, `[v6]` or `[v6]:port`) is one of the names.
    public func allows(_ host: String) -> Bool {
        if let name = Self.plainName(host) { return names.contains(name) }
        guard let parts = Self.split(host) else { return false }
        return names.contains(parts.name)
    }

    /// The name of a `Host` value as clients nearly always send it — lower-case letters, digits, `.`, `-`, `_`, no
    /// trailing dot, then `:` and a port or nothing — read from its bytes; nil for anything else, which `split`
    /// reads (it gives the same name for these, at a hundred times the cost: every request asks). Public for the
    /// fuzz target that holds the two readings to each other (`make fuzz`, target `host`).
    public static func plainName(_ value: String) -> String? {
        let bytes = value.utf8
        var colon: String.UTF8View.Index?
        for index in bytes.indices {
            let byte = bytes[index]
            if colon != nil {
                guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            } else if byte == UInt8(ascii: ":") {
                colon = index
            } else {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                     UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"): continue
                default: return nil
                }
            }
        }
        let end = colon ?? bytes.endIndex
        // Empty, a trailing dot or an empty port: the general reading.
        guard end != bytes.startIndex, bytes[bytes.index(before: end)] != UInt8(ascii: "."),
              colon.map({ bytes.index(after: $0) != bytes.endIndex }) ?? true else { return nil }
        return String(value[..<end])
    }

    /// Whether a request saying `hosts` (its `Host` values: one, normally) is addressed to this listener: there is
    /// at least one, and every one is a name of it.
    public func admits(_ hosts: [String]) -> Bool {
        !hosts.isEmpty && hosts.allSatisfy { allows($0) }
    }

    /// The answer to a request not addressed to this listener: 421 Misdirected Request (RFC 9110 §15.5.20), as an
    /// RFC 9457 problem naming `Host` (the code is the HTTP layer's `http_<status>`).
    public func refusal(_ hosts: [String]) -> Problem {
        let shown: String
        if let host = hosts.first(where: { !allows($0) }) ?? hosts.first {
            let short = host.count > 100 ? String(host.prefix(100)) + "…" : host
            shown = "The Host header '\(short)'"
        } else {
            shown = "A request without a Host header"
        }
        return Problem(status: 421, code: "http_421", title: "Misdirected request",
                       detail: "\(shown) does not name this server: it answers only to localhost, 127.0.0.1, [::1], its own address and the names of ALLOWED_HOSTS.")
    }

    public static let everyInterface: Set<String> = ["0.0.0.0", "[::]"]

    /// A configured name (`HTTP_HOST`, an entry of `ALLOWED_HOSTS`) as compared: a bare IPv6 address gets its
    /// brackets; nil when it is not a name or address alone (a port, scheme, path or user).
    public static func configuredName(_ entry: String) -> String? {
        let text = entry.trimmingCharacters(in: .whitespaces)
        let colons = text.filter({ $0 == ":" }).count
        let bracketed = !text.hasPrefix("[") && colons > 1 ? "[\(text)]" : text
        guard let parts = split(bracketed), parts.port == nil else { return nil }
        return parts.name
    }

    /// A `Host` value's name (lower-cased, without a trailing dot) and port; nil when it is not `host[:port]`.
    public static func split(_ value: String) -> (name: String, port: Substring?)? {
        let text = value.trimmingCharacters(in: .whitespaces)
        let name: Substring
        let rest: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            name = text[...close]
            rest = text[text.index(after: close)...]
            let inside = name.dropFirst().dropLast()
            guard !inside.isEmpty, inside.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        } else if let colon = text.firstIndex(of: ":") {
            name = text[..<colon]
            rest = text[colon...]
        } else {
            name = text[...]
            rest = ""
        }
        var port: Substring?
        if !rest.isEmpty {
            guard rest.first == ":", rest.dropFirst().allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            port = rest.dropFirst()
        }
        var lowered = name.lowercased()
        if lowered.hasSuffix("."), !lowered.hasPrefix("[") { lowered.removeLast() }
        guard !lowered.isEmpty, lowered.hasPrefix("[") || lowered.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "_") })
        else { return nil }
        return (lowered, port)
    }
}
