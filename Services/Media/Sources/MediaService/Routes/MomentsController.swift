import Crypto
import Foundation
import Hummingbird
import ImageSanitizer
import MediaUpload
import LanternContracts
import LanternCore
import LanternHTTP

/// `/v1/moments` and `/v1/widgets/pairly`: one ephemeral photo from each partner to the other. Decodes the
/// upload, asks `MomentSharing`, and answers with its receipt, the photo or the widget.
struct MomentsController: Sendable {
    let sharing: MomentSharing
    let maxBytes: Int

    /// `/v1/moments`: upload, and the current photo.
    var moments: RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.post(use: upload)
        routes.get("current", use: current)
        return routes
    }

    /// `/v1/widgets/pairly`.
    var widget: RouteCollection<LanternRequestContext> {
        RouteCollection(context: LanternRequestContext.self).get(use: widget)
    }

    /// `/internal/realtime/state`: the `moment` of Pairly's first real-time frame (the widget's answer).
    var realtimeState: RouteCollection<LanternRequestContext> {
        RouteCollection(context: LanternRequestContext.self).get(use: realtimeState)
    }

    @Sendable func upload(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<MomentReceipt> {
        let sender = try pairlyUser(context)
        let contentType = request.headers[.contentType] ?? "application/octet-stream"
        let isMultipart = contentType.lowercased().hasPrefix("multipart/form-data")
        if !(isMultipart || contentType.lowercased().hasPrefix("image/") || contentType.lowercased().hasPrefix("application/octet-stream")) {
            throw Problem.unsupportedMediaType("Send the photo as the body (image/jpeg, image/png, image/heic, image/webp) or as multipart/form-data.")
        }
        var request = request
        let body = try await request.collectBody(limit: isMultipart ? maxBytes + MultipartPhoto.overhead : maxBytes)
        let bytes = isMultipart ? try MultipartPhoto.extract(from: body, contentType: contentType) : Array(buffer: body)
        guard bytes.count <= maxBytes else { throw Problem.tooLarge("The photo must be at most \(maxBytes) bytes.") }
        guard !bytes.isEmpty else { throw Problem.badRequest("The body is empty; send the photo.", code: "image_missing") }
        do {
            switch try await sharing.share(bytes, from: sender, idempotencyKey: try IdempotencyKey.of(request)) {
            case .stored(let receipt):
                return JSONResponse(receipt, status: .created)
            case .replayed(let receipt):
                return JSONResponse(receipt, status: .ok, headers: [.init("Idempotent-Replayed")!: "true"])
            }
        } catch let failure as SharingFailure {
            throw Self.problem(failure, requestID: context.requestID)
        }
    }

    @Sendable func current(_ request: Request, context: LanternRequestContext) async throws -> Response {
        guard let (moment, bytes) = try await sharing.current(for: try pairlyUser(context)) else {
            throw Problem.notFound(PairlyWidget.placeholder, code: "no_moment")
        }
        let etag = "\"\(moment.etag)\""
        var headers: HTTPFields = [.eTag: etag, .cacheControl: "private, no-cache", .lastModified: Self.httpDate(moment.sentAt)]
        if ConditionalResponse.matches(request.headers[.ifNoneMatch], etag) { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = moment.contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// Everything the home-screen widget needs in one small answer, with its own ETag.
    @Sendable func widget(_ request: Request, context: LanternRequestContext) async throws -> Response {
        try ConditionalResponse.json(try await sharing.widget(for: try pairlyUser(context)), for: request, cacheControl: "private, no-cache")
    }

    @Sendable func realtimeState(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<[String: JSONValue]> {
        let claims = try context.requireAuth()
        guard claims.app == AppID.pairly.rawValue, let user = claims.userID else { return JSONResponse([:]) }
        return JSONResponse([RealtimeState.pairlyMoment.name: try JSONValue(encoding: try await sharing.widget(for: user))])
    }

    private func pairlyUser(_ context: LanternRequestContext) throws -> UUID {
        try context.requireUser(of: .pairly, otherwise: .forbidden("Moments are a Pairly feature.", code: "moments_not_available"))
    }

    static func problem(_ failure: SharingFailure, requestID: String) -> Problem {
        switch failure {
        case .notPaired:
            return .conflict("Pair with your partner before sharing a moment.", code: "not_paired")
        case .keyReused:
            return .invalid(field: "Idempotency-Key", "was already used for a different photo; use a new key per photo", code: "idempotency_key_reused")
        case .concurrentRetry:
            return .internalError(requestID: requestID)
        case .rejected(let rejection):
            return problem(rejection)
        }
    }

    static func problem(_ rejection: ImageRejection) -> Problem {
        switch rejection {
        case .unsupportedFormat:
            return .unsupportedMediaType("The photo must be a JPEG, PNG, HEIC or WebP image.")
        case .truncated:
            return .invalid(field: "body", "\(rejection); the upload may have been cut off — try again", code: "image_truncated")
        case .malformed:
            return .invalid(field: "body", "\(rejection)", code: "image_malformed")
        case .tooManyPixels, .sideTooLong:
            return .invalid(field: "body", "\(rejection)", code: "image_too_many_pixels")
        case .overBudget:
            return .invalid(field: "body", "\(rejection); a photo from a phone takes milliseconds", code: "image_too_complex")
        }
    }

    /// RFC 9110 HTTP-date (`Last-Modified`).
    static func httpDate(_ date: Date) -> String {
        date.formatted(Date.VerbatimFormatStyle(
            format: "\(weekday: .abbreviated), \(day: .twoDigits) \(month: .abbreviated) \(year: .defaultDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits) GMT",
            locale: Locale(identifier: "en_US_POSIX"), timeZone: TimeZone(identifier: "GMT")!, calendar: Calendar(identifier: .gregorian)))
    }
}
