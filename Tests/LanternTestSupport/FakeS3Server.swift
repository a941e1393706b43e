import AsyncHTTPClient
import Foundation
import LanternObjectStorage
import NIOPosix

/// An S3-compatible server on loopback that verifies signatures: moto's server from PyPI, set up by
/// `scripts/s3-test-server.py` with a user and key allowed to use S3. One per test process, started on first use;
/// it stops when the process ends (the script waits for its standard input to close).
public actor FakeS3Server {
    public struct Connection: Sendable, Decodable {
        public let endpoint: String
        public let accessKeyId: String
        public let secretAccessKey: String
        public let region: String

        public var credentials: SigV4.Credentials { .init(accessKeyID: accessKeyId, secretAccessKey: secretAccessKey) }

        /// A new bucket with a unique name, created, on the shared client.
        public func newBucket(client: HTTPClient = .shared) async throws -> S3Bucket {
            let bucket = S3Bucket(endpoint: URL(string: endpoint)!, bucket: "t" + String(UInt64.random(in: .min ... .max), radix: 36),
                                  region: region, credentials: credentials, client: client)
            try await bucket.create()
            return bucket
        }
    }

    public static let shared = FakeS3Server()

    private var starting: Task<Connection, any Error>?
    private var process: Process?
    private var input: Pipe?

    /// The server, started once however many tests ask at the same time.
    public func connection() async throws -> Connection {
        if let starting { return try await starting.value }
        let task = Task { try await start() }
        starting = task
        return try await task.value
    }

    private func start() async throws -> Connection {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", ServiceList.root.appendingPathComponent("scripts/s3-test-server.py").path]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let line = try await Task.detached { () -> Data in
            var data = Data()
            while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty {
                if byte == Data("\n".utf8) { break }
                data.append(byte)
            }
            return data
        }.value
        guard let connection = try? JSONDecoder().decode(Connection.self, from: line) else {
            process.terminate()
            throw FakeS3Unavailable(output: String(decoding: line, as: UTF8.self))
        }
        self.process = process
        self.input = input
        return connection
    }

    public struct FakeS3Unavailable: Error, CustomStringConvertible {
        public let output: String
        public var description: String {
            "scripts/s3-test-server.py did not start moto's S3 server (pip install 'moto[server]' boto3; scripts/test.sh does): \(output)"
        }
    }
}
