import Foundation

/// A parser of attacker bytes and what must hold for every input it is given: the property a fuzzer checks on
/// each generated input (`lantern-fuzz`, `make fuzz`) and the regression tests check on every saved one
/// (`Tests/Fuzz/Corpus/<target>/`, `Tests/Fuzz/Regressions/<target>/`).
///
/// A crash (a trap on an index, an overflow, a force-unwrap) is a finding by itself; `check` reports the
/// findings that are not crashes: an answer that breaks the parser's contract.
public enum FuzzTarget: String, CaseIterable, Sendable {
    case jpeg, png, webp, heic, multipart, socketio, json, host, path

    /// Checks one input; returns what the parser answered (for `lantern-fuzz` replays and the seed tests).
    @discardableResult
    public func check(_ bytes: [UInt8]) throws(FuzzFinding) -> String {
        switch self {
        case .jpeg: return try ImageChecks.check(bytes, as: .jpeg)
        case .png: return try ImageChecks.check(bytes, as: .png)
        case .webp: return try ImageChecks.check(bytes, as: .webp)
        case .heic: return try ImageChecks.check(bytes, as: .heic)
        case .multipart: return try MultipartChecks.check(bytes)
        case .socketio: return try SocketIOChecks.check(bytes)
        case .json: return try JSONChecks.check(bytes)
        case .host: return try HostChecks.check(bytes)
        case .path: return try PathChecks.check(bytes)
        }
    }
}

/// An input for which a parser broke its contract, and how.
public struct FuzzFinding: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// `condition` or a finding.
@inline(__always)
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFinding) {
    if !condition { throw FuzzFinding(message()) }
}
