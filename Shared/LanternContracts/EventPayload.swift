import Foundation
import LanternCore

/// The `data` of one kind of event or job: its type name, version and stream travel with the Swift type, so a
/// producer cannot put a payload on the wrong stream and a consumer decodes exactly what was written.
///
/// Every payload is declared once, in this module; producers and consumers import it rather than copying it.
/// docs/events.md describes each one and a test keeps the two in step (`EventCatalogue`).
public protocol EventPayload: Codable, Sendable {
    /// `<domain>.<past-tense verb>`, e.g. `user.created`: the envelope's `type`.
    static var eventType: String { get }
    /// The payload version; a breaking change gets a new version (and a new Swift type).
    static var version: Int { get }
    /// Where it is published.
    static var stream: EventStream { get }
}

extension EventPayload {
    public static var version: Int { 1 }
}

/// A stream of the architecture contract, without the deployment's prefix (see `StreamNames`).
public enum EventStream: Sendable, Hashable {
    /// `<prefix>.events.<service>`: everything a service announces.
    case events(String)
    /// `<prefix>.jobs.<kind>`: work for a worker (`push`, `evolution`).
    case jobs(String)
    /// `<prefix>.realtime`: frames for users' open sockets, carried by every gateway (`RealtimeFrame`).
    case realtime
}

/// Stream names from the architecture contract. `prefix` is `lantern` in every deployment; tests give each
/// suite its own prefix so suites can share one Redis.
public struct StreamNames: Sendable, Equatable {
    public var prefix: String
    public init(prefix: String = "lantern") { self.prefix = prefix }

    /// `lantern.events.<service>`: everything a service announces.
    public func events(_ service: String) -> String { "\(prefix).events.\(service)" }
    /// `lantern.jobs.<kind>`: work for a worker (`push`, `evolution`).
    public func jobs(_ kind: String) -> String { "\(prefix).jobs.\(kind)" }
    /// `lantern.realtime`: real-time frames for the gateways.
    public var realtime: String { "\(prefix).realtime" }
    /// `lantern.dlq.<stream>`: messages that failed too often.
    public func deadLetter(of stream: String) -> String {
        let name = stream.hasPrefix(prefix + ".") ? String(stream.dropFirst(prefix.count + 1)) : stream
        return "\(prefix).dlq.\(name)"
    }

    /// `lantern.development.clock_offset_ms`: how far a development stack's clock runs ahead (`DevelopmentTime`),
    /// in milliseconds; written by the gateway's `POST /development/clock`, read by every process each second.
    public var developmentClockOffset: String { "\(prefix).development.clock_offset_ms" }

    /// `lantern.erased.<user id>`: set by identity as `DELETE /v1/me` erases the account, for as long as one of its
    /// access tokens can live; every service's token check refuses the user while it exists (`ErasedAccounts`).
    public func erasedAccount(_ user: String) -> String { "\(prefix).erased.\(user)" }

    public func name(of stream: EventStream) -> String {
        switch stream {
        case .events(let service): events(service)
        case .jobs(let kind): jobs(kind)
        case .realtime: realtime
        }
    }
}
