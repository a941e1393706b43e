import Foundation
import LanternCore

/// A route of one service's internal API (`/internal/…`, service tokens of audience `internal`; the gateway never
/// forwards `/internal`), with the types of its body and its answer: the contract both sides compile against.
/// The callee mounts `path`; callers go through `InternalClient` (LanternService).
public struct InternalRoute<Body: Encodable & Sendable, Answer: Sendable>: Sendable {
    /// The service that serves it, as `Services/services.tsv` names it.
    public let service: String
    /// `GET` or `POST`.
    public let method: String
    public let path: String
    /// The services that may call it (their service tokens' names): the serving service refuses any other with
    /// 403 `caller_not_allowed`, so one service's token does not open every internal route.
    public let callers: Set<String>
    /// How the answer's bytes become `Answer`: JSON, or text (an SVG).
    public let decode: @Sendable (Data) throws -> Answer

    public init(service: String, method: String, path: String, callers: Set<String>, decode: @escaping @Sendable (Data) throws -> Answer) {
        self.service = service
        self.method = method
        self.path = path
        self.callers = callers
        self.decode = decode
    }
}

extension InternalRoute where Answer: Decodable {
    /// A route answering JSON.
    public init(service: String, method: String = "POST", path: String, callers: Set<String>) {
        self.init(service: service, method: method, path: path, callers: callers) { try JSONDecoder.lantern.decode(Answer.self, from: $0) }
    }
}

extension InternalRoute where Answer == String {
    /// A route answering text (UTF-8).
    public static func text(service: String, method: String = "POST", path: String, callers: Set<String>) -> Self {
        Self(service: service, method: method, path: path, callers: callers) { String(decoding: $0, as: UTF8.self) }
    }
}

/// The body of a `GET` route: nothing.
public struct NoBody: Codable, Sendable, Equatable {
    public init() {}
}
