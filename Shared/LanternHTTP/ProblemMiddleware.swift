import Foundation
import Hummingbird
import LanternCore
import Logging
import NIOCore
import NIOHTTP1

/// Turns every error into an RFC 9457 `application/problem+json` response.
///
/// Known client mistakes (`Problem`, Hummingbird's `HTTPError`, any `ProblemConvertible` such as a refused token,
/// HTTP framing the parser refused)
/// keep their 4xx status; anything else is logged with the request id and answered with a generic 500 that leaks
/// nothing.
public struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Errors of the service's own dependencies that are not the client's fault nor a bug (a database or Redis
    /// outage: 503); nil for anything else.
    let classify: @Sendable (any Error) -> Problem?

    let describe: @Sendable (any Error) -> String

    /// - Parameter describe: an error as the log line shows it (readable, not a debug dump; the service's
    ///   dependencies know how to say theirs).
    public init(classify: @escaping @Sendable (any Error) -> Problem? = { _ in nil },
                describe: @escaping @Sendable (any Error) -> String = { "\($0)" }) {
        self.classify = classify
        self.describe = describe
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let requestID = (context as? LanternRequestContext)?.requestID.nilIfEmpty
            let problem = classify(error) ?? Self.problem(for: error, requestID: requestID)
            if problem.status == 500 {
                context.logger.error("request failed", metadata: ["error": "\(describe(error))", "errorType": "\(type(of: error))",
                                                                 "path": "\(request.uri.path)"])
            } else if problem.status > 500 {
                // An outage (logged once by what watches it) or an upstream's failure: not a bug of this request.
                context.logger.debug("request failed", metadata: ["error": "\(describe(error))", "path": "\(request.uri.path)"])
            }
            return problem.response()
        }
    }

    public static func problem(for error: any Error, requestID: String?) -> Problem {
        switch error {
        case let problem as Problem:
            return problem
        case let convertible as any ProblemConvertible:
            return convertible.problem
        case is NIOTooManyBytesError:
            return .tooLarge("The request body is too large.")
        case let parserError as HTTPParserError:
            // Broken framing of the body (a chunk size that overflows, `Transfer-Encoding: xchunked`): the client's.
            return .badRequest("The request is not valid HTTP/1.1 (\(parserError)).", code: "malformed_request")
        case let httpError as HTTPError:
            let status = Int(httpError.status.code)
            switch status {
            case 404: return .notFound(httpError.body ?? "No route for this path.", code: "route_not_found")
            case 405: return Problem(status: 405, code: "method_not_allowed", title: "Method not allowed", detail: httpError.body)
            case 413: return .tooLarge(httpError.body ?? "The request body is too large.")
            case 400..<500: return Problem(status: status, code: "http_\(status)", title: httpError.status.reasonPhrase, detail: httpError.body)
            default: return .internalError(requestID: requestID)
            }
        default:
            return .internalError(requestID: requestID)
        }
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}

extension Problem {
    /// The problem as an HTTP response, with `Retry-After` where it applies.
    public func response() -> Response {
        var headers: HTTPFields = [.contentType: "application/problem+json"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: body()))
    }

    /// The problem's JSON, as every answer carries it (the gateway's proxy handler writes it itself).
    public func body() -> ByteBuffer {
        let data = (try? JSONEncoder.lantern.encode(self)) ?? Data(#"{"status":500}"#.utf8)
        ProblemRecorder.record(data)
        return ByteBuffer(bytes: data)
    }
}

/// Every problem a process answers, one JSON line each, appended to `LANTERN_PROBLEM_LOG` when that is set: `make
/// test` sets it for the whole suite, and `scripts/problem-details-check.py` then fails on any `detail` that is not a
/// sentence for a person (a type dump, a source path). Unset (always, outside tests), it costs one branch.
enum ProblemRecorder {
    private static let file: Int32? = ProcessInfo.processInfo.environment["LANTERN_PROBLEM_LOG"].flatMap { path in
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        return descriptor >= 0 ? descriptor : nil
    }

    static func record(_ json: Data) {
        guard let file else { return }
        // One write per line: O_APPEND keeps the lines of concurrent writers (tests, the stack's processes) whole.
        let line = json + Data("\n".utf8)
        _ = line.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
    }
}

extension Problem: ResponseGenerator {
    public func response(from request: Request, context: some RequestContext) throws -> Response { response() }
}
