import Foundation
import LanternContracts
import LanternCore

/// A consumer's handlers, one per payload type it cares about; other event types on the stream are skipped.
///
/// The payload is decoded into the contract's Swift type before the handler runs. A payload that does not
/// decode is a poison message: `StreamConsumer` dead-letters it at once instead of retrying what cannot succeed.
public struct EventHandlers: Sendable {
    public typealias Handle<P> = @Sendable (P, EventEnvelope) async throws -> Void

    private var handlers: [String: @Sendable (EventEnvelope) async throws -> Void] = [:]

    public init() {}

    /// Handles `P`; a later registration for the same type replaces an earlier one.
    public mutating func on<P: EventPayload>(_ type: P.Type, _ handle: @escaping Handle<P>) {
        handlers[P.eventType] = { envelope in
            let payload: P
            do {
                payload = try envelope.payload(as: P.self)
            } catch {
                throw UndecodablePayload(envelope.type, error)
            }
            try await handle(payload, envelope)
        }
    }

    /// Adds `other`'s handlers; a type both handle runs both, this one's first (two parts of one service listening
    /// to one stream share one consumer group, so they must share one consumer).
    public mutating func merge(_ other: EventHandlers) {
        for (type, handler) in other.handlers {
            if let mine = handlers[type] {
                handlers[type] = { envelope in
                    try await mine(envelope)
                    try await handler(envelope)
                }
            } else {
                handlers[type] = handler
            }
        }
    }

    /// The event types handled.
    public var types: Set<String> { Set(handlers.keys) }

    /// Runs the handler of `envelope.type`; returns false when there is none (the event is not for this consumer).
    @discardableResult
    public func handle(_ envelope: EventEnvelope) async throws -> Bool {
        guard let handler = handlers[envelope.type] else { return false }
        try await handler(envelope)
        return true
    }
}

/// An event whose `data` does not match its type's contract; retrying cannot help.
public struct UndecodablePayload: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension UndecodablePayload {
    /// A payload of `type` that did not decode, the field and what is wrong with it in words (the dead letter's
    /// reason is read by an operator, not a debugger).
    public init(_ type: String, _ error: any Error) {
        if let decoding = error as? DecodingError {
            let problem = Problem(decoding: decoding)
            let said = problem.errors?.first.map { "'\($0.field)' \($0.message)" } ?? problem.detail ?? problem.title
            self.init("payload of \(type) does not decode: \(said)")
        } else {
            self.init("payload of \(type) does not decode: \(error)")
        }
    }

    /// The UUID in a payload's string field; anything else makes the event a poison message.
    public static func uuid(_ text: String, field: String) throws -> UUID {
        guard let id = UUID(uuidString: text) else { throw UndecodablePayload("field \(field) is not a UUID: '\(text)'") }
        return id
    }
}
