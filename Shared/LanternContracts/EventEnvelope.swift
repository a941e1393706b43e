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
    public var data: JSONValue {
        didSet { text = nil }
    }
    /// The JSON this envelope was decoded from, while `data` is unchanged: `payload(as:)` decodes the typed payload
    /// from it in one pass, where going through `data` encodes the tree to JSON and parses it again.
    private var text: String? = nil

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

    public func payload<T: Decodable>(as type: T.Type = T.self) throws -> T {
        guard let text else { return try data.decode(as: T.self) }
        do {
            return try JSONDecoder.lantern.decode(DataField<T>.self, from: Data(text.utf8)).data
        } catch let error as DecodingError {
            throw error.insideData()  // the field named as the payload knows it, not as `data.<field>`
        }
    }

    /// The `data` member of an envelope's JSON, typed (the other members are not decoded).
    private struct DataField<T: Decodable>: Decodable {
        var data: T
    }

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
        var envelope = try JSONDecoder.lantern.decode(EventEnvelope.self, from: Data(text.utf8))
        envelope.text = text
        return envelope
    }

    /// Equal when their members are; the text an envelope came from is not one.
    public static func == (lhs: EventEnvelope, rhs: EventEnvelope) -> Bool {
        lhs.id == rhs.id && lhs.type == rhs.type && lhs.version == rhs.version && lhs.occurredAt == rhs.occurredAt
            && lhs.producer == rhs.producer && lhs.subject == rhs.subject && lhs.traceparent == rhs.traceparent && lhs.data == rhs.data
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

extension DecodingError {
    /// The error as the payload inside the envelope's `data` sees it: its coding path without that first key.
    fileprivate func insideData() -> DecodingError {
        func inside(_ context: Context) -> Context {
            Context(codingPath: Array(context.codingPath.dropFirst()), debugDescription: context.debugDescription,
                    underlyingError: context.underlyingError)
        }
        switch self {
        case .typeMismatch(let type, let context): return .typeMismatch(type, inside(context))
        case .valueNotFound(let type, let context): return .valueNotFound(type, inside(context))
        case .keyNotFound(let key, let context): return .keyNotFound(key, inside(context))
        case .dataCorrupted(let context): return .dataCorrupted(inside(context))
        @unknown default: return self
        }
    }
}
