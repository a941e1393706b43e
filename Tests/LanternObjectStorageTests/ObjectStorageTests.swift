import AsyncHTTPClient
import Foundation
import LanternObjectStorage
import LanternTestSupport
import Testing

@Suite("SigV4 and S3")
struct ObjectStorageTests {
    /// AWS's worked example ("Example: GET Object", sig-v4-header-based-auth): the same inputs must give the
    /// signature AWS publishes.
    @Test("the signature of AWS's documented GET Object example")
    func awsExample() {
        let signer = SigV4(credentials: .init(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
                           region: "us-east-1")
        let date = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z
        let headers = signer.sign(method: "GET", path: "/test.txt", headers: [("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9")],
                                  payloadHash: SigV4.hash([]), date: date)
        let authorization = headers.first { $0.0 == "Authorization" }?.1
        #expect(authorization == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(headers.contains { $0 == ("x-amz-date", "20130524T000000Z") })
        #expect(SigV4.hash([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SigV4.encode("a b/ü+~") == "a%20b%2F%C3%BC%2B~" && SigV4.encode("a b/c", keepSlash: true) == "a%20b/c")
    }

    @Test("put, get, list and delete against a server that checks every signature; awkward keys; a missing object is nil")
    func roundTrip() async throws {
        let bucket = try await FakeS3Server.shared.connection().newBucket()
        // Keys with unreserved punctuation and slashes. (moto's signature check fails for keys that need
        // percent-encoding — spaces, non-ASCII, `=&()+` — for botocore's own requests as well, so those are covered by
        // the encoding rules above, not here; Lantern's keys are UUIDs under a prefix.)
        let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        for key in ["moments/0e6f4bd2-8f0c-4c3e-9d1e-5b6a1f2e3d4c", "odd.keys/a_b-c~d.jpg"] {
            try await bucket.put(bytes, key: key, contentType: "image/jpeg")
            #expect(try await bucket.get(key: key) == bytes)
        }
        // (A prefix with `/` would be encoded `%2F` in the query, as AWS specifies, which moto's check also
        // rejects for botocore.)
        #expect(try await bucket.list(prefix: "moments") == ["moments/0e6f4bd2-8f0c-4c3e-9d1e-5b6a1f2e3d4c"])
        #expect(try await bucket.list(prefix: "odd") == ["odd.keys/a_b-c~d.jpg"])
        try await bucket.delete(key: "odd.keys/a_b-c~d.jpg")
        #expect(try await bucket.get(key: "odd.keys/a_b-c~d.jpg") == nil)
        try await bucket.delete(key: "never-there")  // deleting nothing succeeds
        try await bucket.put([], key: "empty")
        #expect(try await bucket.get(key: "empty") == [])
    }

    @Test("a wrong secret is refused by the server (SignatureDoesNotMatch), an unknown bucket is an error, not nil")
    func refusals() async throws {
        let connection = try await FakeS3Server.shared.connection()
        let good = try await connection.newBucket()
        let forged = S3Bucket(endpoint: good.endpoint, bucket: good.bucket, region: connection.region,
                              credentials: .init(accessKeyID: connection.accessKeyId, secretAccessKey: "not-the-secret"), client: .shared)
        await #expect { try await forged.put([1, 2, 3], key: "x") } throws: { ($0 as? S3Bucket.Failure)?.code == "SignatureDoesNotMatch" }
        let missing = S3Bucket(endpoint: good.endpoint, bucket: "no-such-bucket-here", region: connection.region,
                               credentials: connection.credentials, client: .shared)
        await #expect { _ = try await missing.get(key: "x") } throws: { ($0 as? S3Bucket.Failure)?.code == "NoSuchBucket" }
    }
}
