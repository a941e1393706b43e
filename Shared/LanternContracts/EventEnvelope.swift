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

    /// The envelope of a typed payload: `type` and `version` come from `P`.
    public init<P: EventPayload>(_ payload: P, producer: String, subject: String?, occurredAt: Date, traceparent: String? = nil) throws {
        try self.init(type: P.eventType, version: P.version, occurredAt: occurredAt, producer: producer, subject: subject,
                      traceparent: traceparent, payload: payload)
    }

    public func payload<T: Decodable>(as type: T.Type = T.self) throws -> T { try data.decode(as: T.self) }

    /// The text of the envelope of a typed payload, encoded in one pass: the same JSON as
    /// `EventEnvelope(payload, …).encoded()`, without turning the payload into a `JSONValue` first (an encode, a
    /// decode and a second encode, on the path of every write that records an event).
    public static func encoded<P: EventPayload>(_ payload: P, id: UUID = .v7(), producer: String, subject: String?, occurredAt: Date,
                                                 traceparent: String?) throws -> String {
        let typed = Typed(id: id, type: P.eventType, version: P.version, occurredAt: occurredAt, producer: producer, subject: subject,
                          traceparent: traceparent, data: payload)
        return String(decoding: try JSONEncoder.lantern.encode(typed), as: UTF8.self)
    }

    /// An envelope whose `data` is the typed payload (or, for `EventEnvelope` itself, its `JSONValue`).
    private struct Typed<P: Encodable>: Encodable {
        var id: UUID, type: String, version: Int, occurredAt: Date, producer: String, subject: String?, traceparent: String?, data: P

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id.lowercased, forKey: .id)
            try c.encode(type, forKey: .type)
            try c.encode(version, forKey: .version)
            try c.encode(occurredAt, forKey: .occurredAt)
            try c.encode(producer, forKey: .producer)
            try c.encode(subject, forKey: .subject)
            try c.encode(traceparent, forKey: .traceparent)
            try c.encode(data, forKey: .data)
        }
    }

    public func encoded() throws -> String {
        String(decoding: try JSONEncoder.lantern.encode(self), as: UTF8.self)
    }

    public static func decode(_ text: String) throws -> EventEnvelope {
        try JSONDecoder.lantern.decode(EventEnvelope.self, from: Data(text.utf8))
    }

    enum CodingKeys: String, CodingKey {
        case id, type, version, occurredAt, producer, subject, traceparent, data
    }

    /// One encoding for both shapes (`Typed`): the contract lists subject and traceparent as "… or null", always present.
    public func encode(to encoder: any Encoder) throws {
        try Typed(id: id, type: type, version: version, occurredAt: occurredAt, producer: producer, subject: subject,
                  traceparent: traceparent, data: data).encode(to: encoder)
    }
}
