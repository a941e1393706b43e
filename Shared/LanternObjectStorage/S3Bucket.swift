import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// One bucket of an S3-compatible object store (AWS S3, MinIO, Cloudflare R2, Google Cloud Storage's
/// interoperability API), reached with async-http-client and signed with `SigV4`: put, get and delete of whole
/// objects, which is all photos, report PDFs and images need.
public struct S3Bucket: Sendable {
    /// Where the bucket's name goes: the path (`https://host/bucket/key`, what MinIO and most self-hosted stores
    /// expect) or the host (`https://bucket.host/key`, AWS's virtual-hosted style).
    public enum Addressing: String, Sendable {
        case path, virtual
    }

    public struct Failure: Error, CustomStringConvertible {
        public let operation: String
        public let status: Int
        /// The store's error code (`SignatureDoesNotMatch`, `NoSuchBucket`, `AccessDenied`…), from its XML answer.
        public let code: String?
        public var description: String { "S3 \(operation) answered \(status)\(code.map { " \($0)" } ?? "")" }
    }

    public let endpoint: URL
    public let bucket: String
    public let addressing: Addressing
    let signer: SigV4
    let client: HTTPClient
    let timeout: TimeAmount

    public init(endpoint: URL, bucket: String, region: String, credentials: SigV4.Credentials, addressing: Addressing = .path,
                client: HTTPClient, timeout: TimeAmount = .seconds(10)) {
        self.endpoint = endpoint
        self.bucket = bucket
        self.addressing = addressing
        self.signer = SigV4(credentials: credentials, region: region)
        self.client = client
        self.timeout = timeout
    }

    public func put(_ bytes: [UInt8], key: String, contentType: String = "application/octet-stream") async throws {
        let response = try await send("PUT", key: key, body: bytes, headers: [("content-type", contentType)])
        guard response.status == .ok else { throw try await failure("PUT", response) }
        _ = try await response.body.collect(upTo: 64 * 1024)
    }

    /// The object's bytes, or nil when there is none (404 `NoSuchKey`).
    public func get(key: String, maxBytes: Int = 64 << 20) async throws -> [UInt8]? {
        let response = try await send("GET", key: key)
        if response.status == .notFound {
            let failure = try await failure("GET", response)
            if failure.code == nil || failure.code == "NoSuchKey" { return nil }
            throw failure
        }
        guard response.status == .ok else { throw try await failure("GET", response) }
        return Array(buffer: try await response.body.collect(upTo: maxBytes))
    }

    /// Deletes the object; deleting one that is not there succeeds (S3 answers 204 either way).
    public func delete(key: String) async throws {
        let response = try await send("DELETE", key: key)
        guard response.status == .noContent || response.status == .ok || response.status == .notFound else { throw try await failure("DELETE", response) }
        _ = try await response.body.collect(upTo: 64 * 1024)
    }

    /// The keys under `prefix` (ListObjectsV2, up to 1,000: operators' checks and tests, not a request path).
    public func list(prefix: String) async throws -> [String] {
        let response = try await send("GET", key: nil, query: [("list-type", "2"), ("prefix", prefix)])
        guard response.status == .ok else { throw try await failure("ListObjectsV2", response) }
        let body = String(buffer: try await response.body.collect(upTo: 16 << 20))
        return body.matches(of: /<Key>([^<]*)<\/Key>/).map { String($0.1).replacingOccurrences(of: "&amp;", with: "&") }
    }

    /// Creates the bucket (set-up and tests; an existing bucket of the same owner is fine).
    public func create() async throws {
        let response = try await send("PUT", key: nil)
        guard response.status == .ok else {
            let failure = try await failure("CreateBucket", response)
            if failure.code == "BucketAlreadyOwnedByYou" { return }
            throw failure
        }
        _ = try await response.body.collect(upTo: 64 * 1024)
    }

    func send(_ method: String, key: String?, query: [(String, String)] = [], body: [UInt8] = [], headers extra: [(String, String)] = []) async throws -> HTTPClientResponse {
        let encodedKey = key.map { "/" + SigV4.encode($0, keepSlash: true) } ?? ""
        let host: String
        let path: String
        let port = endpoint.port.map { ":\($0)" } ?? ""
        switch addressing {
        case .path:
            host = (endpoint.host ?? "") + port
            path = Self.basePath(endpoint) + "/" + SigV4.encode(bucket) + encodedKey
        case .virtual:
            host = "\(bucket).\(endpoint.host ?? "")" + port
            path = Self.basePath(endpoint) + (encodedKey.isEmpty ? "/" : encodedKey)
        }
        var signedHeaders = [("host", host)] + extra
        if !body.isEmpty || method == "PUT" { signedHeaders.append(("content-length", String(body.count))) }
        let authorization = signer.sign(method: method, path: path, query: query, headers: signedHeaders, payloadHash: SigV4.hash(body), date: Date())
        let queryString = query.isEmpty ? "" : "?" + query.map { "\(SigV4.encode($0.0))=\(SigV4.encode($0.1))" }.joined(separator: "&")
        var request = HTTPClientRequest(url: "\(endpoint.scheme ?? "https")://\(host)\(path)\(queryString)")
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in signedHeaders + authorization { request.headers.replaceOrAdd(name: name, value: value) }
        if method == "PUT" { request.body = .bytes(ByteBuffer(bytes: body)) }
        return try await client.execute(request, timeout: timeout)
    }

    func failure(_ operation: String, _ response: HTTPClientResponse) async throws -> Failure {
        let body = String(buffer: try await response.body.collect(upTo: 64 * 1024))
        let code = body.firstRange(of: "<Code>").flatMap { start in
            body[start.upperBound...].firstRange(of: "</Code>").map { String(body[start.upperBound..<$0.lowerBound]) }
        }
        return Failure(operation: operation, status: Int(response.status.code), code: code)
    }

    static func basePath(_ url: URL) -> String {
        let path = url.path
        return path.hasSuffix("/") ? String(path.dropLast()) : path
    }
}
