import ContentKit
import Foundation
import Hummingbird
import LanternCore
import LanternHTTP

/// The operator API of RoastMeLater's collections (remote configuration, REQ-COL constraint), mounted at
/// `/v1/operator/roastmelater/collections` behind `RequireOperatorKey`: list, read, create, edit, retire and
/// restore, and each collection's audit trail. A collection's `ETag` is its version; an edit or retirement sent
/// with `If-Match` is refused (412) when someone changed it since.
struct OperatorCollectionsController: Sendable {
    let collections: Collections

    struct StoredBody: Encodable, Sendable {
        var collection: RoastCollection
        var retired: Bool
        var version: Int
        var updatedAt: Date
        var updatedBy: String

        init(_ stored: StoredCollection) {
            collection = stored.collection
            retired = stored.retired
            version = stored.version
            updatedAt = stored.updatedAt
            updatedBy = stored.updatedBy
        }
    }

    struct ListBody: Encodable, Sendable {
        var collections: [StoredBody]
    }

    struct ChangeBody: Encodable, Sendable {
        var action: String
        var version: Int
        var by: String
        var at: Date
        var fields: [String: CollectionChange.FieldChange]
    }

    struct ChangesBody: Encodable, Sendable {
        var collectionId: String
        var changes: [ChangeBody]
    }

    /// Mounted at `/v1/operator/roastmelater/collections`.
    var routes: RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.get(use: list)
        routes.post(use: create)
        routes.get(":collectionId", use: read)
        routes.put(":collectionId", use: edit)
        routes.post(":collectionId/retire") { request, context in try await retire(true, request, context) }
        routes.post(":collectionId/restore") { request, context in try await retire(false, request, context) }
        routes.get(":collectionId/changes", use: changes)
        return routes
    }

    @Sendable func list(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<ListBody> {
        JSONResponse(ListBody(collections: try await collections.all().map(StoredBody.init)))
    }

    @Sendable func read(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let id = try collectionID(context)
        guard let stored = try await collections.all().first(where: { $0.collection.id == id }) else { throw Self.notFound(id) }
        return try Self.answer(stored, status: .ok, request: request, context: context)
    }

    @Sendable func create(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let collection = try await request.decodeJSON(as: RoastCollection.self, context: context)
        let outcome = try await collections.create(collection, by: try operatorName(context))
        if outcome == .exists {
            throw Problem(status: 409, code: "collection_exists", title: "Conflict", detail: "A collection '\(collection.id)' exists; edit it with PUT.",
                          errors: [.init(field: "id", message: "is taken")])
        }
        return try respond(outcome, id: collection.id, status: .created, request: request, context: context)
    }

    @Sendable func edit(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let id = try collectionID(context)
        let expected = try Self.ifMatch(request)
        let collection = try await request.decodeJSON(as: RoastCollection.self, context: context)
        if collection.id != id {
            throw Problem.invalid(field: "id", "is '\(collection.id)' but the path names '\(id)'; a collection's id does not change")
        }
        return try respond(try await collections.edit(id, to: collection, expectedVersion: expected, by: try operatorName(context)),
                           id: id, status: .ok, request: request, context: context)
    }

    func retire(_ retired: Bool, _ request: Request, _ context: LanternRequestContext) async throws -> Response {
        let id = try collectionID(context)
        let expected = try Self.ifMatch(request)
        return try respond(try await collections.setRetired(retired, id, expectedVersion: expected, by: try operatorName(context)),
                           id: id, status: .ok, request: request, context: context)
    }

    @Sendable func changes(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<ChangesBody> {
        let id = try collectionID(context)
        let changes = try await collections.records.changes(of: id)
        if changes.isEmpty, try await collections.records.collection(id) == nil { throw Self.notFound(id) }
        return JSONResponse(ChangesBody(collectionId: id, changes: changes.map {
            ChangeBody(action: $0.action, version: $0.version, by: $0.operatorName, at: $0.at, fields: $0.fields)
        }))
    }

    private func respond(_ outcome: Collections.OperatorOutcome, id: String, status: HTTPResponse.Status, request: Request,
                         context: LanternRequestContext) throws -> Response {
        switch outcome {
        case .saved(let stored): return try Self.answer(stored, status: status, request: request, context: context)
        case .unchanged(let stored): return try Self.answer(stored, status: .ok, request: request, context: context)
        case .invalid(let problems): throw Problem.invalid(problems.map { .init(field: $0.field, message: $0.message) })
        case .exists: throw Problem(status: 409, code: "collection_exists", title: "Conflict", detail: "A collection '\(id)' exists.")
        case .missing: throw Self.notFound(id)
        case .stale(let current):
            throw Problem(status: 412, code: "collection_changed", title: "Precondition Failed",
                          detail: "The collection is at version \(current) now; read it again and apply the change to that version.",
                          errors: [.init(field: "If-Match", message: "names an older version than \(current)")])
        case .festivalsUnavailable:
            throw Problem(status: 503, code: "astrology_unavailable", title: "Service Unavailable",
                          detail: "The festival dates come from astrology, which is not answering; try again shortly.", retryAfter: 5)
        }
    }

    static func answer(_ stored: StoredCollection, status: HTTPResponse.Status, request: Request, context: LanternRequestContext) throws -> Response {
        var response = try JSONResponse(StoredBody(stored), status: status).response(from: request, context: context)
        response.headers[.eTag] = "\"\(stored.version)\""
        return response
    }

    /// The version an `If-Match` names (`"3"`), nil without one; `*` matches any.
    static func ifMatch(_ request: Request) throws -> Int? {
        guard let value = request.headers[.ifMatch]?.trimmingCharacters(in: .whitespaces), value != "*" else { return nil }
        let digits = value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 3 ? String(value.dropFirst().dropLast()) : value
        guard let version = Int(digits), version > 0 else {
            throw Problem.invalid(field: "If-Match", "must be the collection's ETag, such as \"3\"")
        }
        return version
    }

    static func notFound(_ id: String) -> Problem { .notFound("No collection '\(id)'.", code: "collection_not_found") }

    private func collectionID(_ context: LanternRequestContext) throws -> String {
        guard let id = context.parameters.get("collectionId") else { throw Problem.notFound("No collection.", code: "collection_not_found") }
        return id
    }

    private func operatorName(_ context: LanternRequestContext) throws -> String {
        guard let name = context.operatorName else { throw Problem.unauthorized("Send an operator key.", code: "missing_operator_key") }
        return name
    }
}
