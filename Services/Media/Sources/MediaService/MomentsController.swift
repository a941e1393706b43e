import Crypto
import Foundation
import Hummingbird
import ImageSanitizer
import LanternContracts
import LanternCore
import LanternHTTP

/// `/v1/moments` and `/v1/widgets/pairly`: one ephemeral photo from each partner to the other.
struct MomentsController: Sendable {
    let store: MomentStore
    let storage: any MomentStorage
    let sanitizer: ImageSanitizer
    let maxBytes: Int

    static let placeholder = "No moment yet — when your partner shares a photo, it appears here."

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
        let key = try idempotencyKey(request)
        let requestHash = SHA256.hash(data: bytes).hex
        if let key, let previous = try await previousUpload(sender: sender, key: key, requestHash: requestHash) {
            return JSONResponse(previous, status: .ok, headers: [.init("Idempotent-Replayed")!: "true"])
        }
        let image: SanitizedImage
        do {
            image = try sanitizer.sanitize(bytes)
        } catch {
            throw Self.problem(error)
        }
        guard let receiver = try await store.partner(of: sender) else {
            throw Problem.conflict("Pair with your partner before sharing a moment.", code: "not_paired")
        }
        let now = store.clock.now()
        let moment = Moment(id: UUID.v7(at: now), senderID: sender, receiverID: receiver, senderName: try await store.senderName(sender),
                            storageKey: UUID().lowercased, contentType: image.format.contentType, byteSize: image.bytes.count,
                            width: image.width, height: image.height, etag: SHA256.hash(data: image.bytes).hex.prefix(32).description, sentAt: now)
        try await storage.write(image.bytes, key: moment.storageKey)
        do {
            switch try await store.replace(with: moment, idempotencyKey: key, requestHash: requestHash) {
            case .stored(let receipt, let replaced):
                if let replaced { try? await storage.delete(key: replaced) }
                return JSONResponse(receipt, status: .created)
            }
        } catch UploadFailure.notPaired {
            try? await storage.delete(key: moment.storageKey)
            throw Problem.conflict("Pair with your partner before sharing a moment.", code: "not_paired")
        } catch is MomentStore.UploadRace {
            try? await storage.delete(key: moment.storageKey)
            guard let key, let previous = try await previousUpload(sender: sender, key: key, requestHash: requestHash) else { throw Problem.internalError(requestID: context.requestID) }
            return JSONResponse(previous, status: .ok, headers: [.init("Idempotent-Replayed")!: "true"])
        } catch {
            try? await storage.delete(key: moment.storageKey)
            throw error
        }
    }

    @Sendable func current(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let receiver = try pairlyUser(context)
        guard let moment = try await store.current(for: receiver), let bytes = try await storage.read(key: moment.storageKey) else {
            throw Problem.notFound(Self.placeholder, code: "no_moment")
        }
        let etag = "\"\(moment.etag)\""
        var headers: HTTPFields = [.eTag: etag, .cacheControl: "private, no-cache", .lastModified: Self.httpDate(moment.sentAt)]
        if Self.matches(request.headers[.ifNoneMatch], etag) { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = moment.contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    struct Widget: Codable, Sendable {
        var hasPhoto: Bool
        var momentId: String?
        var senderName: String?
        var sentAt: Date?
        var photoUrl: String?
        var photoEtag: String?
        var width: Int?
        var height: Int?
        var placeholder: String
    }

    /// Everything the home-screen widget needs in one small answer, with its own ETag.
    @Sendable func widget(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let data = try JSONEncoder.lantern.encode(try await widget(for: try pairlyUser(context)))
        let etag = "\"\(SHA256.hash(data: data).hex.prefix(32))\""
        let headers: HTTPFields = [.eTag: etag, .cacheControl: "private, no-cache"]
        if Self.matches(request.headers[.ifNoneMatch], etag) { return Response(status: .notModified, headers: headers) }
        var full = headers
        full[.contentType] = "application/json; charset=utf-8"
        return Response(status: .ok, headers: full, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    private func widget(for receiver: UUID) async throws -> Widget {
        let moment = try await store.current(for: receiver)
        return Widget(hasPhoto: moment != nil, momentId: moment?.id.lowercased, senderName: moment?.senderName, sentAt: moment?.sentAt,
                      photoUrl: moment.map { _ in "/v1/moments/current" }, photoEtag: moment.map { "\"\($0.etag)\"" },
                      width: moment?.width, height: moment?.height, placeholder: Self.placeholder)
    }

    @Sendable func realtimeState(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<[String: JSONValue]> {
        let claims = try context.requireAuth()
        guard claims.app == AppID.pairly.rawValue, let user = claims.userID else { return JSONResponse([:]) }
        return JSONResponse(["moment": try JSONValue(encoding: try await widget(for: user))])
    }

    private func previousUpload(sender: UUID, key: String, requestHash: String) async throws -> MomentReceipt? {
        do {
            return try await store.previousUpload(sender: sender, key: key, requestHash: requestHash)
        } catch UploadFailure.keyReused {
            throw Problem.invalid(field: "Idempotency-Key", "was already used for a different photo; use a new key per photo", code: "idempotency_key_reused")
        }
    }

    private func idempotencyKey(_ request: Request) throws -> String? {
        guard let key = request.headers[.idempotencyKey] else { return nil }
        guard (1...128).contains(key.count), key.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 32 && $0.value < 127 }) else {
            throw Problem.invalid(field: "Idempotency-Key", "must be 1–128 visible ASCII characters (a UUID is ideal)")
        }
        return key
    }

    private func pairlyUser(_ context: LanternRequestContext) throws -> UUID {
        try context.requireUser(of: .pairly, otherwise: .forbidden("Moments are a Pairly feature.", code: "moments_not_available"))
    }

    static func problem(_ rejection: ImageRejection) -> Problem {
        switch rejection {
        case .unsupportedFormat:
            return .unsupportedMediaType("The photo must be a JPEG, PNG, HEIC or WebP image.")
        case .truncated:
            return .invalid(field: "body", "\(rejection); the upload may have been cut off — try again", code: "image_truncated")
        case .malformed:
            return .invalid(field: "body", "\(rejection)", code: "image_malformed")
        case .tooManyPixels:
            return .invalid(field: "body", "\(rejection)", code: "image_too_many_pixels")
        }
    }

    static func matches(_ ifNoneMatch: String?, _ etag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        return ifNoneMatch == "*" || ifNoneMatch.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "W/", with: "") == etag }
    }

    /// RFC 9110 HTTP-date (`Last-Modified`).
    static func httpDate(_ date: Date) -> String {
        date.formatted(Date.VerbatimFormatStyle(
            format: "\(weekday: .abbreviated), \(day: .twoDigits) \(month: .abbreviated) \(year: .defaultDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits) GMT",
            locale: Locale(identifier: "en_US_POSIX"), timeZone: TimeZone(identifier: "GMT")!, calendar: Calendar(identifier: .gregorian)))
    }
}

extension Digest {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
