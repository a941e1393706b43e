import Foundation
import LanternContracts
import LanternCore
import LanternDatabase
import LanternEvents
import Logging
import PostgresNIO

/// Keeps media's copy of partnerships and names, and erases photos when a pairing ends or an account goes.
///
/// Each handler's writes and the event's id commit together (`ProcessedEvents`), so a redelivered event changes
/// nothing; photo bytes are deleted only after the rows are gone.
struct IdentityEventsConsumer: Sendable {
    let store: MomentStore
    let files: any PhotoFiles
    let processed = ProcessedEvents(schema: MomentStore.schema, consumer: "media.identity")
    var partners: PartnerCopies { PartnerCopies(logger: store.logger) }

    var handlers: EventHandlers {
        var handlers = EventHandlers()
        handlers.on(IdentityEvents.PairingEstablished.self) { pairing, event in
            guard pairing.userIds.count == 2 else { return }
            let id = try UndecodablePayload.uuid(pairing.pairingId, field: "pairingId")
            let (a, b) = (try UndecodablePayload.uuid(pairing.userIds[0], field: "userIds"), try UndecodablePayload.uuid(pairing.userIds[1], field: "userIds"))
            try await once(event) { connection in
                try await partners.pair(a, b, pairing: id, on: connection)
                return []
            }
        }
        handlers.on(IdentityEvents.PairingDissolved.self) { pairing, event in
            let id = try UndecodablePayload.uuid(pairing.pairingId, field: "pairingId")
            try await once(event) { connection in
                try await partners.unpair(pairing: id, on: connection)
                var erased: [String] = []
                for user in try pairing.userIds.map({ try UndecodablePayload.uuid($0, field: "userIds") }) {
                    erased += try await store.erase(momentsOf: user, on: connection)
                }
                return erased
            }
        }
        handlers.on(IdentityEvents.UserDeleted.self) { deleted, event in
            let user = try UndecodablePayload.uuid(deleted.userId, field: "userId")
            try await once(event) { connection in
                // First, so that an upload admitted before is erased with the rest and one after is refused.
                try await ErasedUsers.record(user, at: event.occurredAt, schema: MomentStore.schema, on: connection, logger: store.logger)
                try await partners.forget(user, on: connection)
                try await store.forgetUploadKeys(of: user, on: connection)
                return try await store.erase(momentsOf: user, on: connection)
            }
        }
        handlers.on(IdentityEvents.UserCreated.self) { created, event in
            try await rememberName(created.displayName, of: created.userId, event: event)
        }
        handlers.on(IdentityEvents.ProfileRenamed.self) { renamed, event in
            try await rememberName(renamed.displayName, of: renamed.userId, event: event)
        }
        return handlers
    }

    private func rememberName(_ name: String?, of userId: String, event: EventEnvelope) async throws {
        guard let name else { return }
        let user = try UndecodablePayload.uuid(userId, field: "userId")
        try await once(event) { connection in
            try await partners.rememberName(name, of: user, on: connection)
            return []
        }
    }

    /// Runs `body` in one transaction once per event id; then deletes the photo files it returns.
    private func once(_ event: EventEnvelope, _ body: (PostgresConnection) async throws -> [String]) async throws {
        var erased: [String] = []
        try await processed.once(event.id, client: store.client, logger: store.logger) { connection in
            erased = try await body(connection)
        }
        // Bytes go after the rows are gone: a crash in between leaves an orphan file, never a row without bytes.
        for key in erased { try await files.delete(key: key) }
    }
}
