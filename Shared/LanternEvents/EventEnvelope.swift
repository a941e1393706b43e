import Foundation
import LanternCore

/// The one JSON shape every event and job has on Redis (field `event` of the stream entry).
///
/// See docs/events.md for the catalogue of types and their `data`.
public struct EventEnvelope: Codable, Sendable, Equatable {
    public var id: UUID
    public var type: String
    public var version: Int
    public var occurredAt: Date
    public var producer: String
    public var subject: String?
    public var traceparent: String?
    public var data: JSONValue

    public init(id: UUID = .v7(), type: String, version: Int = 1, occurredAt: Date, producer: String,
                subject: String?, traceparent: String? = nil, data: JSONValue) {
        self.id = id
        self.type = type
        self.version = version
        self.occurredAt = occurredAt
        self.producer = producer
        self.subject = subject
        self.traceparent = traceparent
        self.data = data
    }

    /// Builds an envelope from a typed payload.
    public init(type: String, version: Int = 1, occurredAt: Date, producer: String, subject: String?,
                traceparent: String? = nil, payload: some Encodable) throws {
        self.init(type: type, version: version, occurredAt: occurredAt, producer: producer, subject: subject,
                  traceparent: traceparent, data: try JSONValue(encoding: payload))
    }

    public func payload<T: Decodable>(as type: T.Type = T.self) throws -> T { try data.decode(as: T.self) }

    public func encoded() throws -> String {
        String(decoding: try JSONEncoder.lantern.encode(self), as: UTF8.self)
    }

    public static func decode(_ text: String) throws -> EventEnvelope {
        try JSONDecoder.lantern.decode(EventEnvelope.self, from: Data(text.utf8))
    }

    enum CodingKeys: String, CodingKey {
        case id, type, version, occurredAt, producer, subject, traceparent, data
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id.lowercased, forKey: .id)
        try c.encode(type, forKey: .type)
        try c.encode(version, forKey: .version)
        try c.encode(occurredAt, forKey: .occurredAt)
        try c.encode(producer, forKey: .producer)
        // The contract lists subject and traceparent as "… or null": always present.
        try c.encode(subject, forKey: .subject)
        try c.encode(traceparent, forKey: .traceparent)
        try c.encode(data, forKey: .data)
    }
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
    /// `lantern.dlq.<stream>`: messages that failed too often.
    public func deadLetter(of stream: String) -> String {
        let name = stream.hasPrefix(prefix + ".") ? String(stream.dropFirst(prefix.count + 1)) : stream
        return "\(prefix).dlq.\(name)"
    }
}
