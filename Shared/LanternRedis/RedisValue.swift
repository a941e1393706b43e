/// A decoded Redis reply.
public enum RedisValue: Sendable, Equatable {
    case bulk([UInt8])
    case status(String)
    case integer(Int)
    case array([RedisValue])
    case null
    case error(String)

    public var string: String? {
        switch self {
        case .bulk(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .status(let s): return s
        case .integer(let i): return String(i)
        default: return nil
        }
    }

    public var int: Int? {
        switch self {
        case .integer(let i): return i
        case .bulk, .status: return string.flatMap { Int($0) }
        default: return nil
        }
    }

    public var array: [RedisValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var isNull: Bool { self == .null }
}

public enum RedisError: Error, CustomStringConvertible, Sendable {
    /// The connection failed or broke; the command may or may not have run.
    case connection(String)
    /// Redis answered with an error reply (`-ERR …`, `-NOGROUP …`, `-BUSYGROUP …`).
    case server(String)
    /// The reply had an unexpected shape.
    case unexpectedReply(String)

    public var description: String {
        switch self {
        case .connection(let m): return "redis connection: \(m)"
        case .server(let m): return "redis: \(m)"
        case .unexpectedReply(let m): return "redis unexpected reply: \(m)"
        }
    }

    /// True for errors that say the server is unreachable (worth retrying later).
    public var isConnectionError: Bool {
        if case .connection = self { return true }
        return false
    }
}
