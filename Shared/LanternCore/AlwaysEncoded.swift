/// An optional that is written as `null` when it is nil, not left out: the synthesized `Encodable` skips nil
/// optionals (`encodeIfPresent`), and a contract that promises every key (Pairly's real-time frames) must not.
/// Decoding takes a missing key and `null` alike as nil.
@propertyWrapper
public struct AlwaysEncoded<Value: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension KeyedDecodingContainer {
    /// A missing key is nil (the synthesized decoder would ask for the key).
    public func decode<Value>(_ type: AlwaysEncoded<Value>.Type, forKey key: Key) throws -> AlwaysEncoded<Value> {
        try decodeIfPresent(type, forKey: key) ?? AlwaysEncoded(wrappedValue: nil)
    }
}
