import Foundation
import LanternContracts
import LanternRedis
import LanternTokens
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Accounts deleted while their access tokens still live, marked in Redis (`lantern.erased.<user>`), which every
/// replica of every service reads: identity marks the account before `DELETE /v1/me` erases it, and each token check
/// asks (`AccessTokenVerifier.refusingErased`), so the tokens are refused everywhere from the moment the deletion
/// answers — not when each service's `user.deleted` consumer gets to it.
///
/// A mark lives as long as a token can (`lifetime`); after that no token of the account is valid anyway. What
/// each service erased is also recorded in its own schema (`ErasedUsers`), which fences writes that raced the
/// deletion. Erased accounts are remembered in memory (bounded); a live account is asked about on every call,
/// since no answer about it may be kept.
///
/// When Redis cannot be reached the check lets the token through and logs it, as `RateLimiter` does: refusing every
/// user during an outage would be worse, a deletion cannot happen meanwhile (identity must mark first), and the
/// writes of an erased account are still refused by the database fence.
public struct ErasedAccounts: ErasedAccountCheck {
    let redis: RedisClient
    let streams: StreamNames
    let logger: Logger
    private let known = KnownErased(capacity: 10_000)
    /// The marks asked while one round trip is out go together in the next (every request asks).
    private let marks: CoalescedGet

    public init(redis: RedisClient, streams: StreamNames, logger: Logger) {
        self.redis = redis
        self.streams = streams
        self.logger = logger
        self.marks = CoalescedGet(redis: redis)
    }

    /// Marks `user` erased for `lifetime` (identity, before erasing the account). Throws when Redis cannot be
    /// reached: the deletion must not answer while tokens of the account still pass elsewhere.
    public func mark(_ user: String, for lifetime: Duration) async throws {
        try await redis.send(["SET", streams.erasedAccount(user), "1", "PX", String(max(1, lifetime.milliseconds))])
        known.insert(user)
    }

    public func isErased(_ user: String) async throws -> Bool {
        try await withCheckedThrowingContinuation { answer in
            isErased(user, on: MultiThreadedEventLoopGroup.singleton.any()) { answer.resume(with: $0) }
        }
    }

    public func isErased(_ user: String, on eventLoop: any EventLoop) -> EventLoopFuture<Bool> {
        let promise = eventLoop.makePromise(of: Bool.self)
        isErased(user, on: eventLoop) { promise.completeWith($0) }
        return promise.futureResult
    }

    /// The check itself, answering on an event loop: the async and event-loop forms are made of it.
    func isErased(_ user: String, on eventLoop: any EventLoop, completion: @escaping @Sendable (Result<Bool, any Error>) -> Void) {
        if known.contains(user) { return completion(.success(true)) }
        marks.get(streams.erasedAccount(user), on: eventLoop) { [known, logger] result in
            switch result {
            case .success(let reply):
                if !reply.isNull { known.insert(user) }
                completion(.success(!reply.isNull))
            case .failure(RedisError.connection(let message)):
                logger.warning("erased accounts unavailable; token allowed", metadata: ["error": "\(message)"])
                completion(.success(false))
            case .failure(let error):
                completion(.failure(error))
            }
        }
    }
}

/// Users seen erased: an erasure is final, so they need not be asked about again. Bounded: when full it starts
/// over, which costs a few more questions to Redis.
private final class KnownErased: Sendable {
    private let capacity: Int
    private let users = Mutex<Set<String>>([])

    init(capacity: Int) { self.capacity = capacity }

    func contains(_ user: String) -> Bool { users.withLock { $0.contains(user) } }

    func insert(_ user: String) {
        users.withLock {
            if $0.count >= capacity { $0.removeAll(keepingCapacity: true) }
            $0.insert(user)
        }
    }
}
