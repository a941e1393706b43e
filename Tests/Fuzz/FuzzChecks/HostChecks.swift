import LanternCore

/// The `Host` header, read on every request by every listener (`AllowedHosts`, against DNS rebinding): whatever the
/// bytes, the quick reading of the usual form gives the name the general reading gives, or leaves it to it; and a
/// listener's own names, with any port, are allowed, with one that is not its own refused.
enum HostChecks {
    static let local = AllowedHosts.local

    static func check(_ bytes: [UInt8]) throws(FuzzFinding) -> String {
        // HTTP field values are bytes; NIO hands them on as text, invalid UTF-8 repaired.
        let host = String(decoding: bytes, as: UTF8.self)
        let general = AllowedHosts.split(host)
        if let quick = AllowedHosts.plainName(host) {
            try expect(general?.name == quick, "host: \(host.debugDescription) reads as \(quick.debugDescription) quickly, \(String(describing: general?.name)) in general")
        }
        let allowed = local.allows(host)
        try expect(allowed == (general.map { AllowedHosts.loopback.contains($0.name) } ?? false),
                   "host: \(host.debugDescription) allowed \(allowed), its name \(String(describing: general?.name))")
        return allowed ? "allowed \(general?.name ?? "")" : "refused"
    }
}
