import Foundation
import Hummingbird
import NIOCore
import Synchronization

/// An OpenTelemetry collector on loopback for the tests: OTLP/HTTP's `POST /v1/traces` with a protobuf body
/// (`application/x-protobuf`), answered 200 with an empty `ExportTraceServiceResponse`, as a collector does.
/// Bodies are kept as they came, so a test can look for a trace id's 16 bytes in them.
public final class FakeOTLPCollector: Sendable {
    public struct Export: Sendable {
        public let contentType: String?
        public let body: [UInt8]
    }

    private let received = Mutex<[Export]>([])

    public init() {}

    public var exports: [Export] { received.withLock { $0 } }

    /// Whether any export holds the trace whose id is `hex` (32 hex digits), as raw bytes in the protobuf.
    public func contains(trace hex: String) -> Bool {
        let id = stride(from: 0, to: hex.count, by: 2).compactMap { offset -> UInt8? in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)
        }
        guard id.count == 16 else { return false }
        return exports.contains { export in
            export.body.count >= 16 && (0...(export.body.count - 16)).contains { Array(export.body[$0..<$0 + 16]) == id }
        }
    }

    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.post("/v1/traces") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 16 << 20)
            self.received.withLock { $0.append(Export(contentType: request.headers[.contentType], body: Array(buffer: body))) }
            return Response(status: .ok, headers: [.contentType: "application/x-protobuf"], body: .init(byteBuffer: ByteBuffer()))
        }
        return router
    }
}
