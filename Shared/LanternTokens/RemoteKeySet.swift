import AsyncHTTPClient
import Foundation
import JWTKit
import LanternCore
import Logging
import NIOCore
import NIOFoundationCompat

/// A JSON Web Key Set fetched over HTTP and cached (Google's, Apple's, or identity's own `/.well-known/jwks.json`).
///
/// Keys are refreshed when the cache is older than `maxAge`, and at once when a token names an unknown `kid`
/// (the issuer rotated its keys) — but not more often than `minRefreshInterval`, so a flood of tokens with
/// made-up kids cannot turn into a flood of fetches.
public actor RemoteKeySet {
    public let url: String
    private let httpClient: HTTPClient
    private let maxAge: Duration
    private let minRefreshInterval: Duration
    private let logger: Logger
    private var keys: JWTKeyCollection?
    private var kids: Set<String> = []
    private var fetchedAt: ContinuousClock.Instant?
    private var lastAttempt: ContinuousClock.Instant?
    private var inFlight: Task<Void, any Error>?

    public init(url: String, httpClient: HTTPClient, maxAge: Duration = .seconds(3600),
                minRefreshInterval: Duration = .seconds(1), logger: Logger) {
        self.url = url
        self.httpClient = httpClient
        self.maxAge = maxAge
        self.minRefreshInterval = minRefreshInterval
        self.logger = logger
    }

    /// The key collection that knows `kid`, fetching or refreshing the set if needed.
    public func keys(for kid: String?) async throws -> JWTKeyCollection {
        let now = ContinuousClock.now
        let stale = fetchedAt.map { now - $0 > maxAge } ?? true
        let unknown = kid.map { !kids.contains($0) } ?? false
        let mayRefresh = lastAttempt.map { now - $0 >= minRefreshInterval } ?? true
        if ((keys == nil || stale || unknown) && mayRefresh) || inFlight != nil {
            try await refresh()  // starts a fetch, or joins the one under way
        }
        guard let keys else { throw KeySetUnavailable(reason: "no keys loaded from \(url)") }
        if let kid, !kids.contains(kid) {
            throw TokenError("unknown_key", "The token is signed with an unknown key.")
        }
        return keys
    }

    private func refresh() async throws {
        let task: Task<Void, any Error>
        if let inFlight {
            task = inFlight
        } else {
            task = Task { try await self.fetch() }
            inFlight = task
            lastAttempt = .now
        }
        // Only the fetch this call waited for is cleared: a later waiter must not drop a newer fetch in flight.
        defer { if inFlight == task { inFlight = nil } }
        do {
            try await task.value
        } catch where keys != nil {
            // Keep serving the old keys when the key server is briefly down.
            logger.warning("key set refresh failed; keeping cached keys", metadata: ["url": "\(url)", "error": "\(error)"])
        } catch let unavailable as KeySetUnavailable {
            logger.warning("key set unavailable", metadata: ["url": "\(url)", "reason": "\(unavailable.reason)"])
            throw unavailable
        } catch {
            logger.warning("key set unavailable", metadata: ["url": "\(url)", "error": "\(error)"])
            throw KeySetUnavailable(reason: "\(error)")
        }
    }

    private func fetch() async throws {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await httpClient.execute(request, timeout: .seconds(5))
        guard response.status == .ok else {
            throw KeySetUnavailable(reason: "\(url) answered HTTP \(response.status.code)")
        }
        let body = try await response.body.collect(upTo: 1 << 20)
        let jwks = try JSONDecoder().decode(JWKS.self, from: Data(buffer: body))
        let collection = JWTKeyCollection()
        var newKids: Set<String> = []
        for key in jwks.keys {
            // Keys we cannot use (encryption keys, unknown types) are skipped rather than failing the whole set.
            do {
                try await collection.add(jwk: key)
                if let kid = key.keyIdentifier?.string { newKids.insert(kid) }
            } catch {
                logger.debug("skipping key", metadata: ["kid": "\(key.keyIdentifier?.string ?? "-")", "error": "\(error)"])
            }
        }
        keys = collection
        kids = newKids
        fetchedAt = .now
        logger.debug("key set loaded", metadata: ["url": "\(url)", "kids": "\(newKids.sorted())"])
    }
}

/// The key set could not be fetched (the issuer is down or answered garbage): a 503, not the caller's fault. The
/// reason is for the log; the problem says what a person can act on (a client error's type name is not that).
public struct KeySetUnavailable: ProblemConvertible, CustomStringConvertible, Sendable {
    public let reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { "key set unavailable: \(reason)" }

    public var problem: Problem {
        Problem(status: 503, code: "keys_unavailable", title: "Service unavailable",
                detail: "The keys that check access tokens could not be loaded from the identity service; try again shortly.", retryAfter: 5)
    }
}
