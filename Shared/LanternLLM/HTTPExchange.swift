import AsyncHTTPClient
import Foundation
import LanternCore
import NIOCore
import NIOHTTP1

/// One HTTP exchange with a provider, bounded as a whole: the head and the body must arrive within `timeout`
/// (AsyncHTTPClient's deadline covers the head only). Transport trouble becomes a `ProviderFailure`.
enum HTTPExchange {
    /// Larger answers are not texts Lantern asked for.
    static let maxBodyBytes = 1 << 20

    static func send(_ request: HTTPClientRequest, client: HTTPClient, timeout: Duration) async throws -> (Int, HTTPHeaders, ByteBuffer) {
        guard timeout > .zero else { throw ProviderFailure(.timeout, "no time left") }
        do {
            return try await withThrowingTaskGroup(of: (Int, HTTPHeaders, ByteBuffer)?.self) { group in
                group.addTask {
                    let response = try await client.execute(request, timeout: .nanoseconds(timeout.nanoseconds))
                    let body = try await response.body.collect(upTo: maxBodyBytes)
                    return (Int(response.status.code), response.headers, body)
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let result = first else {
                    throw ProviderFailure(.timeout, "no answer within \(timeout.milliseconds) ms")
                }
                return result
            }
        } catch let failure as ProviderFailure {
            throw failure
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            throw ProviderFailure(.timeout, "\(error)")
        } catch is NIOTooManyBytesError {
            throw ProviderFailure(.malformed, "answer larger than \(maxBodyBytes) bytes")
        } catch {
            throw ProviderFailure(.transport, "\(error)")
        }
    }
}
