import AsyncHTTPClient
import Foundation
import LanternCore
import NIOCore
import NIOHTTP1

/// One HTTP exchange with a provider, bounded as a whole: the head and the body must arrive within `timeout`
/// (AsyncHTTPClient's deadline covers the head only), and the caller leaves at the deadline without
/// waiting for the request to be torn down (`withDeadline`). Transport trouble becomes a `ProviderFailure`.
enum HTTPExchange {
    /// Larger answers are not texts Lantern asked for (images pass their own limit).
    static let maxBodyBytes = 1 << 20

    static func send(_ request: HTTPClientRequest, client: HTTPClient, timeout: Duration,
                     bodyLimit: Int = maxBodyBytes) async throws -> (Int, HTTPHeaders, ByteBuffer) {
        guard timeout > .zero else { throw ProviderFailure(.timeout, "no time left") }
        do {
            return try await withDeadline(timeout) {
                let response = try await client.execute(request, timeout: .nanoseconds(timeout.nanoseconds))
                let body = try await response.body.collect(upTo: bodyLimit)
                return (Int(response.status.code), response.headers, body)
            }
        } catch is DeadlineExceeded {
            throw ProviderFailure(.timeout, "no answer within \(timeout.milliseconds) ms")
        } catch let failure as ProviderFailure {
            throw failure
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            throw ProviderFailure(.timeout, "\(error)")
        } catch is NIOTooManyBytesError {
            throw ProviderFailure(.malformed, "answer larger than \(bodyLimit) bytes")
        } catch {
            throw ProviderFailure(.transport, "\(error)")
        }
    }
}
