import CHiredis
import Foundation
import LanternCore
import Synchronization

/// Where to find Redis and as whom: parsed from `redis://[[user]:password@]host:port[/db]` (`REDIS_URL`). Each
/// service signs in as its own user (`AUTH user password`, Redis 6+ ACLs; `RedisAccess` says what each may do); a URL
/// with a password only signs in as the `default` user.
public struct RedisEndpoint: Sendable, Equatable {
    public var host: String
    public var port: Int
    /// The ACL user; nil for `default`.
    public var user: String?
    public var password: String?
    public var database: Int

    public init(host: String = "127.0.0.1", port: Int = 6379, user: String? = nil, password: String? = nil, database: Int = 0) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
    }

    public init(url text: String, variable: String = "REDIS_URL") throws {
        guard let c = URLComponents(string: text), c.scheme == "redis", let host = c.host, !host.isEmpty else {
            throw ConfigurationError(variable: variable, message: "must look like redis://host:6379/0, got '\(Settings.redacted(text))'")
        }
        let path = c.path.drop(while: { $0 == "/" })
        guard path.isEmpty || Int(path) != nil else {
            throw ConfigurationError(variable: variable, message: "database must be a number, got '\(path)'")
        }
        let user = c.user?.removingPercentEncoding.flatMap { $0.isEmpty ? nil : $0 }
        if user != nil, c.password == nil {
            throw ConfigurationError(variable: variable, message: "names a user without a password (redis://user:password@host:6379/0)")
        }
        self.init(host: host, port: c.port ?? 6379, user: user, password: c.password?.removingPercentEncoding, database: Int(path) ?? 0)
    }
}

/// One blocking hiredis connection. Not for direct use by services: `RedisClient` runs it on its own threads.
///
/// hiredis contexts are not thread-safe, so every call holds `lock`. A context that saw an I/O error is dropped
/// and the next command reconnects, which is how Lantern survives a Redis restart.
final class RedisConnection: @unchecked Sendable {
    private let endpoint: RedisEndpoint
    private let commandTimeout: Duration
    private let connectTimeout: Duration
    private var context: UnsafeMutablePointer<redisContext>?
    private let lock = NSLock()

    init(endpoint: RedisEndpoint, commandTimeout: Duration, connectTimeout: Duration) {
        self.endpoint = endpoint
        self.commandTimeout = commandTimeout
        self.connectTimeout = connectTimeout
    }

    deinit { if let context { redisFree(context) } }

    /// Sends one command and waits for its reply. Error replies are thrown as `RedisError.server`.
    func send(_ arguments: [String]) throws -> RedisValue {
        lock.lock()
        defer { lock.unlock() }
        let ctx = try connectedContext()
        let reply = Self.withArgv(arguments) { argc, argv, lengths in
            redisCommandArgv(ctx, argc, argv, lengths)
        }
        guard let reply else {
            let message = Self.errorString(ctx)
            redisFree(ctx)
            context = nil
            throw RedisError.connection(message)
        }
        defer { freeReplyObject(reply) }
        let value = Self.decode(reply.assumingMemoryBound(to: redisReply.self))
        if case .error(let message) = value { throw RedisError.server(message) }
        return value
    }

    /// Sends several commands in one write and reads their replies in order (pipelining): one round trip
    /// instead of one per command. Error replies are returned in place; a connection failure throws.
    func pipeline(_ commands: [[String]]) throws -> [Result<RedisValue, RedisError>] {
        lock.lock()
        defer { lock.unlock() }
        let ctx = try connectedContext()
        for arguments in commands {
            let status = Self.withArgv(arguments) { argc, argv, lengths in redisAppendCommandArgv(ctx, argc, argv, lengths) }
            if status != REDIS_OK { throw dropContext(ctx) }
        }
        var results: [Result<RedisValue, RedisError>] = []
        results.reserveCapacity(commands.count)
        for _ in commands {
            var reply: UnsafeMutableRawPointer?
            guard redisGetReply(ctx, &reply) == REDIS_OK, let reply else { throw dropContext(ctx) }
            let value = Self.decode(reply.assumingMemoryBound(to: redisReply.self))
            freeReplyObject(reply)
            if case .error(let message) = value { results.append(.failure(.server(message))) } else { results.append(.success(value)) }
        }
        return results
    }

    /// Frees a context after an I/O error; the next command reconnects.
    private func dropContext(_ ctx: UnsafeMutablePointer<redisContext>) -> RedisError {
        let message = Self.errorString(ctx)
        redisFree(ctx)
        context = nil
        return RedisError.connection(message)
    }

    func close() {
        lock.lock()
        defer { lock.unlock() }
        if let context { redisFree(context) }
        context = nil
    }

    private func connectedContext() throws -> UnsafeMutablePointer<redisContext> {
        if let context { return context }
        let ctx = redisConnectWithTimeout(endpoint.host, Int32(endpoint.port), Self.timeval(connectTimeout))
        guard let ctx else { throw RedisError.connection("cannot allocate a context") }
        if ctx.pointee.err != 0 {
            let message = Self.errorString(ctx)
            redisFree(ctx)
            throw RedisError.connection("\(endpoint.host):\(endpoint.port): \(message)")
        }
        // The read timeout must exceed the longest BLOCK a consumer asks for, or a blocking read kills the context.
        redisSetTimeout(ctx, Self.timeval(commandTimeout))
        redisEnableKeepAlive(ctx)
        context = ctx
        do {
            if let password = endpoint.password {
                _ = try sendUnlocked(ctx, ["AUTH"] + (endpoint.user.map { [$0] } ?? []) + [password])
            }
            if endpoint.database != 0 {
                _ = try sendUnlocked(ctx, ["SELECT", String(endpoint.database)])
            }
        } catch {
            redisFree(ctx)
            context = nil
            throw error
        }
        return ctx
    }

    private func sendUnlocked(_ ctx: UnsafeMutablePointer<redisContext>, _ arguments: [String]) throws -> RedisValue {
        let reply = Self.withArgv(arguments) { argc, argv, lengths in redisCommandArgv(ctx, argc, argv, lengths) }
        guard let reply else { throw RedisError.connection(Self.errorString(ctx)) }
        defer { freeReplyObject(reply) }
        let value = Self.decode(reply.assumingMemoryBound(to: redisReply.self))
        if case .error(let message) = value { throw RedisError.server(message) }
        return value
    }

    static func withArgv<R>(_ arguments: [String], _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> R) -> R {
        // Binary-safe: lengths are passed explicitly, so payloads may contain NUL bytes. Every argument lives in one
        // buffer, and the pointers into it are made and used inside the same `withUnsafeBufferPointer`.
        let lengths: [Int] = arguments.map { $0.utf8.count }
        let bytes: [CChar] = arguments.flatMap { $0.utf8CString }
        return bytes.withUnsafeBufferPointer { all in
            var pointers: [UnsafePointer<CChar>?] = []
            pointers.reserveCapacity(arguments.count)
            var offset = 0
            for length in lengths {
                pointers.append(all.baseAddress.map { $0 + offset })
                offset += length + 1  // each argument is followed by its NUL
            }
            return pointers.withUnsafeMutableBufferPointer { argv in
                lengths.withUnsafeBufferPointer { lens in
                    body(Int32(arguments.count), argv.baseAddress!, lens.baseAddress!)
                }
            }
        }
    }

    static func decode(_ reply: UnsafeMutablePointer<redisReply>) -> RedisValue {
        let r = reply.pointee
        switch r.type {
        case REDIS_REPLY_STRING:
            guard let str = r.str else { return .bulk([]) }
            return .bulk(Array(UnsafeRawBufferPointer(start: str, count: Int(r.len))))
        case REDIS_REPLY_STATUS:
            return .status(r.str.map { String(cString: $0) } ?? "")
        case REDIS_REPLY_ERROR:
            return .error(r.str.map { String(cString: $0) } ?? "unknown error")
        case REDIS_REPLY_INTEGER:
            return .integer(Int(r.integer))
        case REDIS_REPLY_ARRAY:
            var items: [RedisValue] = []
            items.reserveCapacity(Int(r.elements))
            for i in 0..<Int(r.elements) {
                if let element = r.element[i] { items.append(decode(element)) } else { items.append(.null) }
            }
            return .array(items)
        default:
            return .null
        }
    }

    private static func errorString(_ ctx: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: ctx.pointee.errstr) { raw in
            let bytes = raw.prefix(while: { $0 != 0 })
            let text = String(decoding: bytes, as: UTF8.self)
            return text.isEmpty ? "connection lost" : text
        }
    }

    private static func timeval(_ duration: Duration) -> timeval {
        let (seconds, attoseconds) = duration.components
        return CHiredis.timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }
}
