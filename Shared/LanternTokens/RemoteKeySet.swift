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
///
/// Until a first set is loaded, a caller waits up to `patience` while the fetch is tried again (every
/// `minRefreshInterval` at most, one fetch shared by every waiter): a service that starts beside identity, or
/// on a machine too busy to answer within one fetch's timeout, answers its first requests late rather than
/// with a 503. `preload()` loads the set as the process starts (`ServiceBuilder.addAccessTokens`).
public actor RemoteKeySet {
    public nonisolated let url: String
    private let httpClient: HTTPClient
    private let maxAge: Duration
    private let minRefreshInterval: Duration
    private let patience: Duration
    private let logger: Logger
    private var keys: JWTKeyCollection?
    private var kids: Set<String> = []
    private var fetchedAt: ContinuousClock.Instant?
    private var lastAttempt: ContinuousClock.Instant?
    private var inFlight: Task<Void, any Error>?

    /// - Parameter patience: how long a caller waits for the first set while fetches fail (`.zero`: one try).
    public init(url: String, httpClient: HTTPClient, maxAge: Duration = .seconds(3600), minRefreshInterval: Duration = .seconds(1),
                patience: Duration = .seconds(10), logger: Logger) {
        self.url = url
        self.httpClient = httpClient
        self.maxAge = maxAge
        self.minRefreshInterval = minRefreshInterval
        self.patience = patience
        self.logger = logger
    }

    /// identity's published set (`<identity>/.well-known/jwks.json`), what every service but identity verifies
    /// app tokens with: cached for 10 minutes, fetched again at once (at most every second) for an unknown key.
    public init(identity: URL, httpClient: HTTPClient = .shared, logger: Logger) {
        self.init(url: identity.appendingPathComponent(".well-known/jwks.json").absoluteString, httpClient: httpClient,
                  maxAge: .seconds(600), minRefreshInterval: .seconds(1), logger: logger)
    }

    /// The key collection that knows `kid`, fetching or refreshing the set if needed.
    public func keys(for kid: String?) async throws -> JWTKeyCollection {
        if keys == nil {
            try await loadFirst()
        } else {
            let now = ContinuousClock.now
            let stale = fetchedAt.map { now - $0 > maxAge } ?? true
            let unknown = kid.map { !kids.contains($0) } ?? false
            if ((stale || unknown) && mayRefresh(at: now)) || inFlight != nil {
                try await refresh()  // starts a fetch, or joins the one under way
            }
        }
        guard let keys else { throw KeySetUnavailable(reason: "no keys loaded from \(url)") }
        if let kid, !kids.contains(kid) {
            throw TokenError("unknown_key", "The token is signed with an unknown key.")
        }
        return keys
    }

    /// Whether the set is loaded (a readiness check that costs no fetch).
    public var isLoaded: Bool { keys != nil }

    /// Loads the set if it is not, trying again until it is or the task is cancelled: run beside the server so
    /// that the first requests find the keys (`ServiceBuilder.addAccessTokens`).
    public func preload() async {
        while keys == nil, !Task.isCancelled {
            do {
                try await loadFirst()
            } catch is CancellationError {
                return
            } catch {
                // `loadFirst` waited its patience and logged each failure; the next round keeps the same pace.
            }
        }
    }

    private func mayRefresh(at now: ContinuousClock.Instant) -> Bool {
        lastAttempt.map { now - $0 >= minRefreshInterval } ?? true
    }

    /// No set yet: fetch (or join the fetch under way), and after a failure try again once `minRefreshInterval`
    /// has passed since the last attempt, until a set arrives or `patience` is over. However many callers wait,
    /// no more than one fetch runs at a time.
    private func loadFirst() async throws {
        let deadline = ContinuousClock.now + patience
        var lastError: (any Error)?
        while keys == nil {
            if inFlight != nil || mayRefresh(at: .now) {
                do {
                    try await refresh()
                    continue
                } catch {
                    lastError = error
                }
            }
            let next = (lastAttempt ?? .now) + minRefreshInterval
            guard next < deadline else {
                throw lastError ?? KeySetUnavailable(reason: "no keys loaded from \(url) within \(patience)")
            }
            try await Task.sleep(until: next, clock: .continuous)
        }
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
