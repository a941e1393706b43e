import Foundation

/// What `media` announces on `lantern.events.media` (docs/events.md, "media").
public enum MediaEvents {
    public static let producer = "media"

    /// A photo became the receiver's current moment.
    public struct MomentShared: EventPayload, Equatable {
        public static let eventType = "moment.shared"
        public static var stream: EventStream { .events(MediaEvents.producer) }
        public var momentId: String
        public var senderId: String
        public var receiverId: String
        public var senderName: String?
        public var sentAt: Date
        public var width: Int
        public var height: Int

        public init(momentId: String, senderId: String, receiverId: String, senderName: String?, sentAt: Date, width: Int, height: Int) {
            self.momentId = momentId
            self.senderId = senderId
            self.receiverId = receiverId
            self.senderName = senderName
            self.sentAt = sentAt
            self.width = width
            self.height = height
        }
    }
}
