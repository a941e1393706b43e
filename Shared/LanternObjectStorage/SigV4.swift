import Crypto
import Foundation

/// AWS Signature Version 4 for S3 requests (the `Authorization` header form), as AWS S3, MinIO, Cloudflare R2 and
/// Google Cloud Storage's interoperability API check it. No package of the mirror signs requests (Soto is not
/// there), and the algorithm is small and fully specified, so it is written here and tested against AWS's own
/// worked example and against a server that verifies signatures (moto).
///
/// https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html
public struct SigV4: Sendable {
    public struct Credentials: Sendable {
        public var accessKeyID: String
        public var secretAccessKey: String
        public init(accessKeyID: String, secretAccessKey: String) {
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
        }
    }

    public let credentials: Credentials
    public let region: String
    public let service: String

    public init(credentials: Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The headers to add to a request: `x-amz-date`, `x-amz-content-sha256` and `Authorization`.
    ///
    /// - Parameters:
    ///   - path: the request's path, already percent-encoded as it is sent (`/bucket/key`).
    ///   - query: the query parameters (unencoded).
    ///   - headers: every other header that is sent and signed (`host` at least); names in any case.
    ///   - payloadHash: hex SHA-256 of the body (`SigV4.hash(body)`).
    public func sign(method: String, path: String, query: [(String, String)] = [], headers: [(String, String)], payloadHash: String,
                     date: Date) -> [(String, String)] {
        let (amzDate, day) = Self.timestamps(date)
        var signed = headers.map { ($0.0.lowercased(), Self.trimmed($0.1)) }
        signed.append(("x-amz-date", amzDate))
        signed.append(("x-amz-content-sha256", payloadHash))
        signed.sort { $0.0 < $1.0 }
        let signedHeaders = signed.map(\.0).joined(separator: ";")
        let canonicalQuery = query.map { (Self.encode($0.0), Self.encode($0.1)) }.sorted { $0 < $1 }.map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
        let canonicalRequest = [method, path.isEmpty ? "/" : path, canonicalQuery,
                                signed.map { "\($0.0):\($0.1)\n" }.joined(), signedHeaders, payloadHash].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, Self.hash(Array(canonicalRequest.utf8))].joined(separator: "\n")
        var key = SymmetricKey(data: Array("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        let signature = Self.hex(Array(HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: key)))
        return [("x-amz-date", amzDate), ("x-amz-content-sha256", payloadHash),
                ("Authorization", "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)")]
    }

    /// Hex SHA-256 of a body (the empty body's for a GET or a DELETE).
    public static func hash(_ bytes: [UInt8]) -> String { hex(Array(SHA256.hash(data: bytes))) }

    /// RFC 3986 unreserved characters stay, everything else is `%XX` (uppercase), as SigV4 requires; `/` too unless
    /// `keepSlash` (an object key's path segments).
    public static func encode(_ text: String, keepSlash: Bool = false) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            case UInt8(ascii: "/") where keepSlash:
                out += "/"
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    static func timestamps(_ date: Date) -> (amzDate: String, day: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let day = String(format: "%04d%02d%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
        return (day + String(format: "T%02d%02d%02dZ", c.hour ?? 0, c.minute ?? 0, c.second ?? 0), day)
    }

    static func trimmed(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
