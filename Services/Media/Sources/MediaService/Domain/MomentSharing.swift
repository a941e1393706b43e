import Crypto
import Foundation
import ImageSanitizer
import LanternCore

/// What media keeps of moments (implemented by `MomentStore`).
protocol MomentRecords: Sendable {
    /// The receipt of an earlier upload with this key, if any; `SharingFailure.keyReused` when its body differed.
    func previousUpload(sender: UUID, key: String, requestHash: String) async throws -> MomentReceipt?
    func partner(of user: UUID) async throws -> UUID?
    func displayName(of user: UUID) async throws -> String?
    /// Makes `moment` the receiver's current one, with its announcements; returns the storage key it replaced.
    /// Throws `SharingFailure.notPaired` when the pairing ended meanwhile, `.concurrentRetry` when another upload
    /// with the same key won.
    func replace(with moment: Moment, idempotencyKey: String?, requestHash: String) async throws -> String?
    func current(for receiver: UUID) async throws -> Moment?
}

/// Where photo bytes live (a folder or an S3-compatible bucket: `Shared/LanternObjectStorage`). Metadata lives in
/// PostgreSQL; the two are kept consistent by writing the bytes first, committing the row, and deleting replaced
/// bytes only after the commit.
public protocol PhotoFiles: Sendable {
    func write(_ bytes: [UInt8], key: String, contentType: String) async throws
    func read(key: String) async throws -> [UInt8]?
    func delete(key: String) async throws
}

/// Why a photo was not shared; each becomes its own problem for the app.
enum SharingFailure: Error, Equatable {
    case notPaired
    /// The Idempotency-Key came with another photo before.
    case keyReused
    case rejected(ImageRejection)
    /// A retry with the same key was stored by a concurrent request (the caller answers with its receipt).
    case concurrentRetry
}

/// Sharing a Pairly moment: one photo from a partner replaces the other partner's current one.
///
/// Nothing of an unpaired user's upload is parsed, and parsing runs off the event loops
/// (`ImageSanitizer.sanitizeInBackground`). The order is what keeps bytes and rows consistent: the cleaned bytes
/// are written first, the row (with its event, frame and pushes) is committed next, and only then are the replaced
/// bytes deleted; a failed commit deletes the new bytes again. A retried upload with the same Idempotency-Key and
/// body gets the first answer.
struct MomentSharing: Sendable {
    enum Outcome: Sendable, Equatable {
        case stored(MomentReceipt)
        /// The same upload was made before (Idempotency-Key): its receipt.
        case replayed(MomentReceipt)
    }

    let records: any MomentRecords
    let files: any PhotoFiles
    let sanitizer: ImageSanitizer
    let clock: WallClock

    func share(_ bytes: [UInt8], from sender: UUID, idempotencyKey: String?) async throws -> Outcome {
        let requestHash = SHA256.hash(data: bytes).hexEncoded
        if let idempotencyKey, let previous = try await records.previousUpload(sender: sender, key: idempotencyKey, requestHash: requestHash) {
            return .replayed(previous)
        }
        // Only a paired user's bytes are parsed at all: the sanitizer is the attack surface.
        guard let receiver = try await records.partner(of: sender) else { throw SharingFailure.notPaired }
        let image: SanitizedImage
        do {
            image = try await sanitizer.sanitizeInBackground(bytes)
        } catch {
            throw SharingFailure.rejected(error)
        }
        let now = clock.now()
        let moment = Moment(id: UUID.v7(at: now), senderID: sender, receiverID: receiver, senderName: try await records.displayName(of: sender),
                            storageKey: UUID().lowercased, contentType: image.format.contentType, byteSize: image.bytes.count,
                            width: image.width, height: image.height, etag: String(SHA256.hash(data: image.bytes).hexEncoded.prefix(32)), sentAt: now)
        try await files.write(image.bytes, key: moment.storageKey, contentType: image.format.contentType)
        do {
            let replaced = try await records.replace(with: moment, idempotencyKey: idempotencyKey, requestHash: requestHash)
            if let replaced { try? await files.delete(key: replaced) }
            return .stored(moment.receipt)
        } catch SharingFailure.concurrentRetry {
            try? await files.delete(key: moment.storageKey)
            guard let idempotencyKey, let previous = try await records.previousUpload(sender: sender, key: idempotencyKey, requestHash: requestHash) else {
                throw SharingFailure.concurrentRetry
            }
            return .replayed(previous)
        } catch {
            try? await files.delete(key: moment.storageKey)
            throw error
        }
    }

    /// The receiver's current photo and its bytes (never the caller's own uploads).
    func current(for receiver: UUID) async throws -> (Moment, [UInt8])? {
        guard let moment = try await records.current(for: receiver), let bytes = try await files.read(key: moment.storageKey) else { return nil }
        return (moment, bytes)
    }

    func widget(for receiver: UUID) async throws -> PairlyWidget {
        PairlyWidget(try await records.current(for: receiver))
    }
}
