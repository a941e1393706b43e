import Foundation

/// A stored moment's metadata: the receiver's one current photo.
struct Moment: Sendable, Equatable {
    var id: UUID
    var senderID: UUID
    var receiverID: UUID
    var senderName: String?
    /// The photo's bytes in `PhotoFiles`.
    var storageKey: String
    var contentType: String
    var byteSize: Int
    var width: Int
    var height: Int
    var etag: String
    var sentAt: Date

    var receipt: MomentReceipt {
        MomentReceipt(momentId: id.lowercased, receiverId: receiverID.lowercased, sentAt: sentAt,
                      width: width, height: height, byteSize: byteSize, contentType: contentType)
    }
}

/// The answer to an upload (also what a retried upload with the same Idempotency-Key gets back).
public struct MomentReceipt: Codable, Sendable, Equatable {
    public var momentId: String
    public var receiverId: String
    public var sentAt: Date
    public var width: Int
    public var height: Int
    public var byteSize: Int
    public var contentType: String
}

/// Everything Pairly's home-screen widget shows, in one small answer.
struct PairlyWidget: Codable, Sendable, Equatable {
    static let placeholder = "No moment yet — when your partner shares a photo, it appears here."

    var hasPhoto: Bool
    var momentId: String?
    var senderName: String?
    var sentAt: Date?
    var photoUrl: String?
    var photoEtag: String?
    var width: Int?
    var height: Int?
    var placeholder: String

    init(_ moment: Moment?) {
        hasPhoto = moment != nil
        momentId = moment?.id.lowercased
        senderName = moment?.senderName
        sentAt = moment?.sentAt
        photoUrl = moment.map { _ in "/v1/moments/current" }
        photoEtag = moment.map { "\"\($0.etag)\"" }
        width = moment?.width
        height = moment?.height
        placeholder = Self.placeholder
    }
}
