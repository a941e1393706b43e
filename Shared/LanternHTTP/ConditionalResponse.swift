import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import LanternCore
import NIOCore

/// Small JSON answers that clients poll (widgets): an `ETag` from the body's hash, `304 Not Modified` when the
/// client's `If-None-Match` names it, and the caller's `Cache-Control`.
public enum ConditionalResponse {
    /// `value` as JSON with an ETag; 304 with no body when `If-None-Match` matches.
    public static func json(_ value: some Encodable, for request: Request, cacheControl: String) throws -> Response {
        let data = try JSONEncoder.lantern.encode(value)
        let etag = tag(data)
        if matches(request.headers[.ifNoneMatch], etag) { return Response(status: .notModified, headers: [.eTag: etag, .cacheControl: cacheControl]) }
        return answer(data, etag: etag, status: .ok, cacheControl: cacheControl)
    }

    /// A write's answer with the same `ETag` a later read of the same value gives (the app can revalidate with it), and
    /// no 304: a write is never answered "not modified".
    public static func written(_ value: some Encodable, status: HTTPResponse.Status, cacheControl: String = "no-store") throws -> Response {
        let data = try JSONEncoder.lantern.encode(value)
        return answer(data, etag: tag(data), status: status, cacheControl: cacheControl)
    }

    /// `"<first 32 hex digits of SHA-256 of the body>"`.
    static func tag(_ data: Data) -> String { "\"\(SHA256.hash(data: data).hexEncoded.prefix(32))\"" }

    private static func answer(_ data: Data, etag: String, status: HTTPResponse.Status, cacheControl: String) -> Response {
        let headers: HTTPFields = [.eTag: etag, .cacheControl: cacheControl, .contentType: "application/json; charset=utf-8"]
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// RFC 9110 §13.1.2: `*`, or any listed tag equal to ours under the weak comparison.
    public static func matches(_ ifNoneMatch: String?, _ etag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        return ifNoneMatch == "*" || ifNoneMatch.split(separator: ",").contains {
            $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "W/", with: "") == etag
        }
    }
}

/// The `Idempotency-Key` header of a creating call that a client may retry (architecture: same key, same result).
public enum IdempotencyKey {
    /// The key, nil when absent; a 422 naming the header when it is not 1–128 visible ASCII characters.
    public static func of(_ request: Request) throws -> String? {
        guard let key = request.headers[.idempotencyKey] else { return nil }
        guard (1...128).contains(key.count), key.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 32 && $0.value < 127 }) else {
            throw Problem.invalid(field: "Idempotency-Key", "must be 1–128 visible ASCII characters (a UUID is ideal)")
        }
        return key
    }
}
